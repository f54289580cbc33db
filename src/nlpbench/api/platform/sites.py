"""What a data site asks the centre, with its site key (:mod:`nlpbench.platform.sites`).

- ``POST /sites/lease`` — the site's next run (one it left unfinished first): 200 and the job (what to run,
  on which dataset, under which profile), or 204 when there is none;
- ``POST /sites/runs/{run}/progress`` — ``{done, total}`` notes (``held``: finished, waiting for the site's
  approval): 200 and ``{"go": true}``, or ``{"go": false}`` once the submission has ended (cancelled, or failed at
  another site), for the site to stop;
- ``POST /sites/runs/{run}/result`` — ``{status, contentHash, notes, nlpbench, reports, tool}``: counts only, in a
  closed form (:func:`nlpbench.platform.sites.checked_reports`); 200 and the submission's status; 409 for a run
  that takes no result or a dataset whose content hash changed, 400 naming the field that is wrong.

Every request needs the site's key (``X-API-Key`` or ``Authorization: Bearer``), and reaches that site's runs
only: another site's run is 404, as if it did not exist. A platform key is not a site key (401).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from nlpbench.api.keys import presented_key, refused
from nlpbench.api.platform.access import Stored, errors
from nlpbench.errors import Kind
from nlpbench.platform import sites
from nlpbench.store.sites import Site

router = APIRouter(tags=["Data sites"])
RunId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def calling_site(request: Request) -> int:
    """The id of the site whose key the request presents; 401 for any other key."""
    key = presented_key(request)
    with request.app.state.store.session(readonly=True) as session:
        site: Site | None = sites.site_of(session, key)
        found = site.id if site is not None else None
    if found is None:
        raise refused("unknown site key")
    return found


CallingSite = Annotated[int, Depends(calling_site)]


class Progress(BaseModel):
    """How many of the run's notes the site has annotated, of how many."""

    model_config = ConfigDict(extra="forbid")
    done: int = Field(ge=0, le=2**31 - 1)
    total: int = Field(ge=0, le=2**31 - 1)
    #: Finished at the site, its result held until the site's organiser approves it.
    held: bool = False


class SiteResult(BaseModel):
    """A site's result: its outcome and, when ``SCORED``, its dataset's content hash and counts."""

    model_config = ConfigDict(extra="forbid")
    status: str = Field(max_length=12)
    contentHash: str | None = Field(default=None, max_length=64)
    notes: int = Field(default=0, ge=0, le=2**31 - 1)
    nlpbench: str = Field(default="", max_length=40, pattern=r"^[0-9A-Za-z.+_-]*$")
    reports: dict[str, dict[str, list[dict[str, Any]]]] | None = None
    tool: dict[str, str] | None = None


@router.post("/sites/lease", responses=errors(Kind.not_found))
def lease(site: CallingSite, store: Stored) -> Any:
    """The site's next run, now running; 204 when it has none."""
    job = sites.next_run(store, site)
    return Response(status_code=204) if job is None else job.as_dict()


@router.post("/sites/runs/{run}/progress", responses=errors(Kind.not_found))
def progress(run: RunId, body: Progress, site: CallingSite, store: Stored) -> dict[str, bool]:
    """Record the run's progress; ``go`` is false once its submission has ended."""
    return {"go": sites.progress(store, site, run, body.done, body.total, held=body.held)}


@router.post("/sites/runs/{run}/result", responses=errors(Kind.not_found, Kind.conflict))
def result(run: RunId, body: SiteResult, site: CallingSite, store: Stored) -> dict[str, str]:
    """Take the run's result; the submission's status after it."""
    returned = sites.Returned(body.status, body.contentHash, body.notes, body.nlpbench, body.reports, body.tool)
    return {"status": sites.receive(store, site, run, returned)}
