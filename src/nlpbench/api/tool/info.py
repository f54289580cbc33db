"""What every tool serves: its tool object, its dependencies and its health check, from ``app.state.tool`` and
``app.state.dependencies``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from nlpbench.api.problems import Responses, problem_doc
from nlpbench.api.tool.answers import ERRORS
from nlpbench.toolapi import schemas

router = APIRouter()
RESPONSES: Responses = {404: problem_doc("Not found"), 500: ERRORS[500]}
COMMON: dict[str, Any] = {"responses": RESPONSES, "tags": ["Tool"]}


@router.get("/tool", operation_id="getTool", response_model=schemas.Tool, summary="Get tool information", **COMMON)
def get_tool(request: Request) -> schemas.Tool:
    return request.app.state.tool


@router.get(
    "/tool/dependencies",
    operation_id="getToolDependencies",
    response_model=schemas.ToolDependencies,
    summary="Get tool dependencies",
    **COMMON,
)
def get_tool_dependencies(request: Request) -> schemas.ToolDependencies:
    return schemas.ToolDependencies(tools=request.app.state.dependencies)


@router.get(
    "/healthCheck",
    operation_id="getHealthCheck",
    response_model=schemas.HealthCheck,
    summary="Get health check information",
    responses=RESPONSES,
    tags=["HealthCheck"],
)
def get_health_check() -> schemas.HealthCheck:
    return schemas.HealthCheck(status="pass")
