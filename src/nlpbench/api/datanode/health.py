"""``GET /healthCheck``: the one data-node request that needs no key."""

from __future__ import annotations

from fastapi import APIRouter, Request

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Data
from nlpbench.api.datanode.params import MISSING, UNAVAILABLE
from nlpbench.store import repository as repo

router = APIRouter()


@router.get(
    "/healthCheck",
    operation_id="getHealthCheck",
    response_model=schemas.HealthCheck,
    tags=["HealthCheck"],
    summary="Get health check information",
    responses={**MISSING, **UNAVAILABLE},
)
def get_health_check(request: Request) -> dict[str, str]:
    with Data(request.app.state.store).reading() as session:
        repo.list_datasets(session, 0, 10)
    return {"status": "pass"}
