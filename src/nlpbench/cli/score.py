"""``nlpbench score TASK``: one subcommand per scoring task.

Each command imports its task when it runs, so that a command loads only what
its task needs (numpy for spans, scipy for coreference, …).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from datetime import datetime
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer
from typer.core import TyperGroup

from nlpbench import files, profiles
from nlpbench.cli.common import (
    CI_METHOD_OPTION,
    CI_OPTION,
    CONFIDENCE_OPTION,
    FORMAT_OPTION,
    OUTPUT_OPTION,
    PER_DOCUMENT_OPTION,
    RESAMPLES_OPTION,
    SEED_OPTION,
    IntervalMethod,
    OutputFormat,
    choices,
    emit,
    fail,
    progress,
    sleeping_blas_threads,
    warn,
)
from nlpbench.cli.options import DB_OPTION, side_format_option
from nlpbench.model import PHI_TYPES
from nlpbench.model.coding import DEFAULT_K
from nlpbench.model.timelines import Mode
from nlpbench.python_api import example as example_file
from nlpbench.report import Report

if TYPE_CHECKING:
    # the click Typer runs on (its own copy since typer 0.25): what a group's commands are typed as
    from typer._click.core import Command, Context

    from nlpbench.tasks import Task


class _TaskGroup(TyperGroup):
    """The score commands: those written below, and one made from its spec for every other registered task
    (:func:`_generated`), so that a task added as one module is scored by ``nlpbench score NAME`` too."""

    def list_commands(self, ctx: Context) -> list[str]:
        """Every task's command: asked for help and completion only, so loading every task costs no score."""
        from nlpbench import tasks

        return sorted({*super().list_commands(ctx), *tasks.load_all()})

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        from nlpbench import tasks

        if cmd_name not in tasks.load_all():
            return None
        single = typer.Typer()
        single.command(cmd_name)(_generated(tasks.REGISTRY.get(cmd_name)))
        return typer.main.get_command(single)


app = typer.Typer(help="Score system output against gold.", no_args_is_help=True, cls=_TaskGroup)

ANNOTATION_TYPES = [name for name in PHI_TYPES if name != "covid_symptom"]
# the members are the PHI registry's: an Enum built at run time, whose members a type checker cannot list
AnnotationType = Enum("AnnotationType", {name: name for name in [*ANNOTATION_TYPES, "all"]}, type=str)  # type: ignore[misc]

#: The output options every score command shares, added by :func:`scored`.
OUTPUT_PARAMETERS = [
    inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, default=FORMAT_OPTION, annotation=OutputFormat),
    inspect.Parameter("output", inspect.Parameter.KEYWORD_ONLY, default=OUTPUT_OPTION, annotation=Path),
    inspect.Parameter("per_document", inspect.Parameter.KEYWORD_ONLY, default=PER_DOCUMENT_OPTION, annotation=bool),
    inspect.Parameter("ci", inspect.Parameter.KEYWORD_ONLY, default=CI_OPTION, annotation=bool),
    inspect.Parameter("ci_method", inspect.Parameter.KEYWORD_ONLY, default=CI_METHOD_OPTION, annotation=IntervalMethod),
    inspect.Parameter("confidence", inspect.Parameter.KEYWORD_ONLY, default=CONFIDENCE_OPTION, annotation=float),
    inspect.Parameter("resamples", inspect.Parameter.KEYWORD_ONLY, default=RESAMPLES_OPTION, annotation=int),
    inspect.Parameter("seed", inspect.Parameter.KEYWORD_ONLY, default=SEED_OPTION, annotation=int),
]
#: What :func:`scored` passes a command besides its own options.
_GIVEN = ("on_document", "per_document")
#: Each score command as it was written (its own options in, a Report out), by task name.
_REPORTERS: dict[str, Callable[..., Report | None]] = {}


def scored(command: Callable[..., Report | None]) -> Callable[..., None]:
    """A score command: ``command`` takes its own options plus ``on_document`` (a progress tick per
    document) and ``per_document`` (whether per-document rows are wanted) and returns the report;
    the result takes the shared output options too (``--format``, ``--output``,
    ``--per-document/--no-per-document``, and ``--ci`` with its settings), counts progress, and
    prints or writes the report. A command that may print a rendering of its own (i2b2's
    ``--official``) names ``output`` among its parameters, gets it, and then returns None."""

    @functools.wraps(command)
    def run(*args, fmt: OutputFormat, output: Path | None, per_document: bool, ci: bool, **options) -> None:
        interval = {name: options.pop(name) for name in ("ci_method", "confidence", "resamples", "seed")}
        shown = fmt is OutputFormat.json and per_document
        inputs = _read_paths(options)
        if "output" in own_names:
            options["output"] = output
        with files.guarded(inputs, {"--output": output}), sleeping_blas_threads():
            with progress("scoring") as tick:
                report = command(*args, **options, on_document=tick, per_document=shown or ci)
            if report is None:  # the command printed its own rendering (i2b2 --official)
                return
            if ci:
                from nlpbench.stats.report import with_intervals

                method = interval.pop("ci_method").value
                with progress("resampling"):
                    with_intervals(report, method=method, **interval)
            if not shown:
                report.per_document = []
            emit(report, fmt, output)

    _REPORTERS[command.__name__] = command
    own_names = set(inspect.signature(command).parameters)
    own = [p for p in inspect.signature(command).parameters.values() if p.name not in (*_GIVEN, "output")]
    run.__signature__ = inspect.Signature([*own, *OUTPUT_PARAMETERS])  # type: ignore[attr-defined]  # Typer reads it
    run.__annotations__ = {k: v for k, v in command.__annotations__.items() if k not in (*_GIVEN, "return")}
    return run


def command_report(task: str, gold: str | Path, pred: str | Path, arguments: list[str]) -> Report:
    """The report of ``nlpbench score TASK`` on ``gold`` and ``pred`` with its other options given as
    ``arguments`` (as typed after ``nlpbench compare … --``), scored through the task, nothing printed;
    its output options are ignored. The files its options name are guarded as inputs."""
    from nlpbench import tasks

    spec = tasks.get(task)
    gold_option, pred_option = (f"--{side}" for side in spec.sides)
    group = cast(_TaskGroup, typer.main.get_command(app))
    command = group.get_command(typer.Context(group), task)
    assert command is not None  # tasks.get() knew the task
    try:
        with command.make_context(
            f"nlpbench score {task}", [gold_option, str(gold), pred_option, str(pred), *arguments]
        ) as context:
            options = dict(context.params)
    except typer.Exit as stopped:  # --help among the arguments
        raise fail(f"score {task}: options after -- score, they do not print") from stopped
    except typer.TyperException as error:  # a usage error in the arguments
        raise fail(f"score {task}: {error}") from None
    reporter = _REPORTERS[task]
    wanted = inspect.signature(reporter).parameters
    given = {name: value for name, value in options.items() if name in wanted and name not in _GIVEN}
    with files.guarded(_read_paths(given), {}):
        report = reporter(**given, on_document=None, per_document=True)
    if report is None:
        raise fail(f"score {task}: --official prints the script's summary, which compare cannot compare")
    return report


def _generated(spec: Task) -> Callable[..., None]:
    """The score command of a task without one of its own: its two sides (``--gold``/``--pred``, or its
    words for them), ``--profile``, and an option per keyword of its ``score``: a flag for a bool, a path
    for an option that names a file, repeatable for one that takes several, text otherwise."""
    score = inspect.signature(spec.score).parameters
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(
            side, keyword, annotation=Path, default=typer.Option(..., f"--{side}", readable=False, help=f"The {side}.")
        )
        for side in spec.sides
    ]
    parameters.append(inspect.Parameter("profile", keyword, annotation=str, default=profile_option(spec.profiles)))
    for name in spec.options():
        default = score[name].default
        kind = _option_kind(spec, name, default)
        given = ... if default is inspect.Parameter.empty else default
        if name in spec.lists and given not in (..., None):
            given = list(given)
        flag = f"--{name.replace('_', '-')}"
        side = name.removesuffix("_format")
        if side in spec.sides and spec.formats:  # a side's format: one of the task's
            option = side_format_option(given, flag, spec.formats, f"Format of --{side}.")
        else:
            option = typer.Option(given, flag, help=f"{spec.name}'s {name}.")
        parameters.append(inspect.Parameter(name, keyword, annotation=kind, default=option))
    parameters += [
        inspect.Parameter("on_document", keyword, default=None, annotation=Callable[[str], None] | None),
        inspect.Parameter("per_document", keyword, default=True, annotation=bool),
    ]

    def command(**options: object) -> Report:
        gold, pred = (options.pop(side) for side in spec.sides)
        controls = {name: options.pop(name) for name in _GIVEN}
        options.update({name: value for name, value in controls.items() if spec.takes(name)})
        return spec.score(gold, pred, **options)

    command.__name__ = spec.name
    command.__doc__ = "\n\n".join(part for part in (spec.summary, inspect.getdoc(spec.score)) if part)
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return scored(command)


def _option_kind(spec: Task, name: str, default: object) -> type:
    """The type the command line gives option ``name`` of ``spec``: see :func:`_generated`."""
    one: type = Path if name in spec.files else str
    if isinstance(default, bool):
        one = bool
    elif isinstance(default, int | float) and name not in spec.files:
        one = type(default)
    elif name in spec.lists and isinstance(default, list | tuple) and default:
        one = type(default[0])
    return list[one] if name in spec.lists else one  # type: ignore[valid-type]


def _read_paths(options: dict[str, object]) -> list[tuple[str, str | Path]]:
    """The files a score command reads, by option: its Path options (a list of them too), and the
    ``--gold`` and ``--pred`` of ``score sandbox`` (a file, or a URL that names none)."""
    found: list[tuple[str, str | Path]] = []
    for name, value in options.items():
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, Path) or (name in ("gold", "pred") and isinstance(one, str)):
                found.append((f"--{name.replace('_', '-')}", one))
    return found


def _task_score(name: str, gold: object, pred: object, **options: object) -> Report:
    """Score through the registered task ``name`` (:mod:`nlpbench.tasks`), gold first."""
    from nlpbench import tasks

    return tasks.get(name).score(gold, pred, **options)


def profile_option(family: str) -> Any:
    """``--profile``: one of the profiles of ``family``, listed in help."""
    return typer.Option("standard", "--profile", metavar=choices(profiles.names(family)), help="Scoring rules.")


def add_commands(root: typer.Typer) -> None:
    root.add_typer(app, name="score")


#: The formats of the tasks whose commands are written here (their specs' ``formats``: a test checks they agree).
SANDBOX_FORMATS = ("sandbox", "sandbox-bundles", "brat", "bioc", "i2b2", "jsonl")
NER_FORMATS = ("conll", "jsonl", "omin")
LINKING_FORMATS = ("omin", "jsonl")
RELATIONS_FORMATS = ("brat", "jsonl", "omin-re", "jsonl-triples")
COREF_FORMATS = ("conll2012", "jsonl", "omin-csv")


@app.command("sandbox")
@scored
def sandbox(
    gold: str = typer.Option(
        None,
        "--gold",
        "-g",
        help="Gold annotations: a file (NLP Sandbox JSON unless --gold-format) or a data node's annotation store URL.",
    ),
    pred: str = typer.Option(
        None, "--pred", "-p", help="Predicted annotations: a file (see --pred-format) or an annotation store URL."
    ),
    annotation_types: list[AnnotationType] = typer.Option(
        None,
        "--annotation-type",
        "-t",
        help="Which annotations to score; repeat for several, or 'all' for the five types, in one pass "
        "(default: every one of the five types the inputs hold).",
    ),
    profile: str = profile_option("spans"),
    relax: int = typer.Option(2, "--relax", min=0, help="Length difference instance_relax accepts."),
    errors: int = typer.Option(0, "--errors", min=0, help="List up to N false positives and N false negatives."),
    gold_format: str = side_format_option(
        "sandbox", "--gold-format", SANDBOX_FORMATS, "Format of --gold.", any_format=True
    ),
    pred_format: str = side_format_option(
        "sandbox", "--pred-format", SANDBOX_FORMATS, "Format of --pred.", any_format=True
    ),
    example: bool = typer.Option(False, "--example", help="Score the example pair shipped with nlpbench."),
    db: str = DB_OPTION,
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """PHI span annotation as the NLP Sandbox scored it: instance strict and relaxed, token, type.

    --gold and --pred are files, annotation stores of a data node
    (http://HOST/api/v1/datasets/D/annotationStores/goldstandard) or of the
    store (store:D/annotationStores/goldstandard with --db).

    Profiles: [bold]standard[/] (one-to-one matching, whitespace tokens, unrounded),
    [bold]nlpsandbox[/] (nlpsandbox-client 4.3.1 exactly), [bold]nlpsandbox-legacy[/]
    (the scorer before 2022). Several types (-t date -t id, or -t all) are scored in
    one pass over the files; each row then carries its annotation_type. Without
    -t, every one of the five types that the gold or the predictions hold is scored,
    and the titles name them.
    """
    if example:
        gold, pred = example_file("gold.json"), example_file("pred.json")  # type: ignore[assignment]  # paths
    if gold is None or pred is None:
        raise fail("give --gold and --pred, or --example")
    from nlpbench.cli.stored import scoring_input

    names = [t.value for t in annotation_types or ()]
    return _task_score(
        "sandbox",
        scoring_input(gold, db),
        scoring_input(pred, db),
        annotation_type=(names[0] if len(names) == 1 else names) or None,
        profile=profile,
        relax=relax,
        errors=errors,
        gold_format=gold_format,
        pred_format=pred_format,
        per_document=per_document,
        on_document=on_document,
    )


def pred_format_option(names: tuple[str, ...], *, any_format: bool = False) -> Any:
    """``--pred-format``, the gold's format unless told."""
    return side_format_option(
        None, "--pred-format", names, "Format of --pred (default: that of --gold).", any_format=any_format
    )


GOLD_DOCUMENTS_ONLY_OPTION = typer.Option(
    False, "--gold-documents-only", help="Ignore predictions for documents the gold does not have."
)


@app.command("ner")
@scored
def ner(
    gold: Path = typer.Option(..., "--gold", "-g", readable=False, help="Gold entities."),
    pred: Path = typer.Option(..., "--pred", "-p", readable=False, help="Predicted entities."),
    profile: str = profile_option("ner"),
    gold_format: str = side_format_option(
        "conll", "--gold-format", NER_FORMATS, "Format of --gold (omin: OMIn CSV).", any_format=True
    ),
    pred_format: str = pred_format_option(NER_FORMATS, any_format=True),
    labels: str = typer.Option(
        None,
        "--labels",
        "-l",
        help="Keep both sides to these labels: conll03, ontonotes, ace05, ace05_nltk, scierc, or LABEL,LABEL,…",
    ),
    tokens: Path = typer.Option(
        None, "--tokens", readable=False, help="Token source for OMIn mention strings (OMIn test.english.jsonlines)."
    ),
    gold_documents_only: bool = GOLD_DOCUMENTS_ONLY_OPTION,
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """Named entities as SemEval-2013 scored them: strict, exact, partial and type.

    Each row gives COR, INC, PAR, MIS, SPU, POSSIBLE and ACTUAL with precision
    = (COR + PAR/2) / ACTUAL and recall = (COR + PAR/2) / POSSIBLE, overall and
    per label. Profiles: [bold]standard[/] (optimal one-to-one matching),
    [bold]nervaluate[/] (the PyPI package's greedy one-to-one matching),
    [bold]trusted-ke[/] (trusted_ke on OMIn; its "weak" is partial, its
    "strong" exact).
    """
    return _task_score(
        "ner",
        gold,
        pred,
        on_document=on_document,
        profile=profile,
        gold_format=gold_format,
        pred_format=pred_format,
        labels=labels,
        tokens=tokens,
        gold_documents_only=gold_documents_only,
    )


@app.command("linking")
@scored
def linking(
    gold: Path = typer.Option(
        ..., "--gold", "-g", readable=False, help="Gold entities with their (mention, QID) choices."
    ),
    pred: Path = typer.Option(..., "--pred", "-p", readable=False, help="Predicted (mention, QID) links."),
    profile: str = profile_option("linking"),
    gold_format: str = side_format_option(
        "omin", "--gold-format", LINKING_FORMATS, "Format of --gold (omin: nel.csv and tool CSVs)."
    ),
    pred_format: str = pred_format_option(LINKING_FORMATS),
    qid_column: str = typer.Option(
        "qids", "--qid-column", help="QID column of an OMIn tool file (BLINK: bi_qid or cross_qid)."
    ),
    ontology: Path = typer.Option(
        None,
        "--ontology",
        readable=False,
        help="Local ontology (JSON, see nlpbench.formats.ontology): adds class and jc rows.",
    ),
    gold_documents_only: bool = GOLD_DOCUMENTS_ONLY_OPTION,
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """Entity linking: precision, recall and F1 in the strong, weak and flex modes.

    [bold]strong[/]: exact mention, primary QID; [bold]weak[/]: either mention
    inside the other, primary QID; [bold]flex[/]: exact mention on the
    primary, secondary or tertiary span, the QID of that span or of a more
    specific earlier one. With --ontology, the matched pairs' mean
    [bold]class[/] and [bold]jc[/] (Jiang–Conrath) similarity, computed
    locally as KGTK computes them. Profiles: [bold]standard[/] (one-to-one),
    [bold]trusted-ke[/] (trusted_ke's nel_eval.py).
    """
    return _task_score(
        "linking",
        gold,
        pred,
        on_document=on_document,
        profile=profile,
        gold_format=gold_format,
        pred_format=pred_format,
        qid_column=qid_column,
        ontology=ontology,
        gold_documents_only=gold_documents_only,
    )


@app.command("relations")
@scored
def relations(
    gold: Path = typer.Option(..., "--gold", "-g", readable=False, help="Gold relations."),
    pred: Path = typer.Option(..., "--pred", "-p", readable=False, help="Predicted relations."),
    profile: str = profile_option("relations"),
    gold_format: str = side_format_option(
        "brat", "--gold-format", RELATIONS_FORMATS, "Format of --gold (omin-re: OMIn re.csv).", any_format=True
    ),
    pred_format: str = pred_format_option(RELATIONS_FORMATS, any_format=True),
    by: str = typer.Option(
        None, "--by", help="Compare arguments by span or by text (default: span when both sides have spans)."
    ),
    types: str = typer.Option(
        None, "--relation-types", help="Score only these relation types: TYPE,TYPE,… or @FILE (one per line)."
    ),
    gold_documents_only: bool = GOLD_DOCUMENTS_ONLY_OPTION,
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """Relation extraction: triples scored strict and boundaries, per relation type, micro and macro.

    [bold]strict[/]: head and tail (spans or normalised text) with their
    entity types and the relation type; [bold]boundaries[/]: head, tail and
    relation type. Profiles: [bold]standard[/] (every triple counts,
    fractions), [bold]rebel[/] (REBEL's re_score: sets, percentages, macro
    over the --relation-types list).
    """
    return _task_score(
        "relations",
        gold,
        pred,
        on_document=on_document,
        profile=profile,
        gold_format=gold_format,
        pred_format=pred_format,
        by=by,
        types=types,
        gold_documents_only=gold_documents_only,
    )


@app.command("coref")
@scored
def coref(
    key: Path = typer.Option(
        ..., "--key", "-k", readable=False, help="Gold clusters (CoNLL-2012 unless --key-format)."
    ),
    response: Path = typer.Option(
        ..., "--response", "-r", readable=False, help="System clusters (the key's format unless told)."
    ),
    profile: str = profile_option("coref"),
    key_format: str = side_format_option("conll2012", "--key-format", COREF_FORMATS, "Format of --key."),
    response_format: str = side_format_option(
        None, "--response-format", COREF_FORMATS, "Format of --response (default: --key-format)."
    ),
    remove_singletons: bool = typer.Option(
        False, "--remove-singletons", help="Score without clusters of one mention, on both sides."
    ),
    remove_nested: bool = typer.Option(
        False,
        "--remove-nested",
        help="Drop each mention that lies inside another mention of its own cluster, on both sides.",
    ),
    id_column: str = typer.Option(
        None, "--id-column", help="omin-csv response: the document id column (found by name otherwise: c5_id, c5, …)."
    ),
    clusters_column: str = typer.Option(
        None, "--clusters-column", help="omin-csv response: the clusters column (found by name otherwise: corefs, …)."
    ),
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    r"""Coreference: mention identification, MUC, B³, CEAFm, CEAFe, BLANC, LEA and the CoNLL score.

    Profiles: [bold]standard[/] (the published definitions on clean clusters),
    [bold]conll2012[/] (the reference Perl scorer v8.01 and its LEA branch exactly),
    [bold]e2e[/] (e2e-coref / corefeval, the OMIn / trusted_ke scorer). Formats:
    CoNLL-2012 (coreference in the last column, every part a document), e2e
    jsonlines (doc_key, clusters of inclusive \[start, end]; a response's
    predicted_clusters are read when present), omin-csv (an id column and
    Python-literal cluster lists). Counts are summed over the key's documents.
    """
    return _task_score(
        "coref",
        key,
        response,
        on_document=on_document,
        profile=profile,
        key_format=key_format,
        response_format=response_format,
        remove_singletons=remove_singletons,
        remove_nested=remove_nested,
        id_column=id_column,
        clusters_column=clusters_column,
    )


class Track(StrEnum):
    D = "D"
    P = "P"
    X = "X"


@app.command("codiesp")
@scored
def codiesp(
    track: Track = typer.Option(..., "--track", case_sensitive=False, help="CodiEsp track: D, P or X."),
    gold: Path = typer.Option(
        ...,
        "--gold",
        "-g",
        readable=False,
        help="Gold TSV: case, code (D, P); case, label, code, reference, 's e[;s e]' (X).",
    ),
    pred: Path = typer.Option(
        ...,
        "--pred",
        "-p",
        readable=False,
        help="Predicted TSV: case, code in rank order (D, P); case, 's e', label, code (X).",
    ),
    valid_codes: list[Path] = typer.Option(
        ...,
        "--valid-codes",
        "-c",
        readable=False,
        help="Valid-code list (code in the first column); repeat for X's D and P lists.",
    ),
    profile: str = profile_option("codiesp"),
    k: list[int] = typer.Option(
        list(DEFAULT_K), "--k", min=1, help="Cutoffs of MAP@k, P@k and R@k (standard, D and P)."
    ),
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """Clinical coding as CodiEsp 2020 scored it: MAP over ranked codes (D, P), F1 with text references (X).

    Codes compare lower-cased; predicted codes in none of the valid-code lists are removed before ranks
    are counted. Profiles: [bold]standard[/] (MAP over every gold document as trec_eval -c, MAP@k, P@k,
    R@k, code categories), [bold]codiesp2020[/] (the official scripts with trectools 0.0.42 exactly).
    """
    return _task_score("codiesp", gold, pred, valid_codes=valid_codes, track=track.value, profile=profile, k=k)


@app.command("timelines")
@scored
def timelines(
    gold: Path = typer.Option(
        ...,
        "--gold",
        "-g",
        readable=False,
        help="Gold timelines: a JSON object from patient id to a list of (chemo, label, date) triples.",
    ),
    pred: Path = typer.Option(
        ...,
        "--pred",
        "-p",
        readable=False,
        help="Predicted timelines, the same JSON (convert system TSV with `nlpbench convert`).",
    ),
    all_ids: Path = typer.Option(..., "--all-ids", readable=False, help="Every patient id, one per line."),
    gold_ids: Path = typer.Option(
        None,
        "--gold-ids",
        readable=False,
        help="Score only these patients (the manually annotated ones), one id per line.",
    ),
    mode: Mode = typer.Option(..., "--mode", help="strict, or relaxed to the day, month or year."),
    profile: str = profile_option("timelines"),
    reference_date: datetime = typer.Option(
        None,
        "--reference-date",
        formats=["%Y-%m-%d"],
        help="The day that completes dates without day, month or year under chemotimelines2024, "
        "as eval_timeline.py completes them from the day it runs. Default: today.",
    ),
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report:
    """Patient treatment timelines as ChemoTimelines 2024 scored them: micro, Type A, Type B and official.

    Every predicted patient among the gold ids (all gold patients without
    --gold-ids) is scored; Type A averages over them, Type B over those with
    gold tuples, and official = (Type A F1 + Type B F1) / 2.

    Profiles: [bold]standard[/] (ISO 8601 date intervals that match when they
    share a day, month or year; case-insensitive labels; ids checked by id),
    [bold]chemotimelines2024[/] (eval_timeline.py exactly: dateutil dates
    completed from --reference-date, %W weeks, count checks). The official row is
    reported in every mode: eval_timeline.py v20240305 printed it for --relaxed_to
    month, the October 2024 version for --strict.
    """
    return _task_score(
        "timelines",
        gold,
        pred,
        on_document=on_document,
        all_ids=all_ids,
        gold_ids=gold_ids,
        mode=mode,
        profile=profile,
        reference_date=reference_date.date() if reference_date else None,
    )


@app.command("i2b2")
@scored
def i2b2(
    pred: Path = typer.Option(
        ..., "--pred", "-p", readable=False, help="System i2b2 XML: a directory of PATIENT-RECORD.xml, or a file."
    ),
    gold: Path = typer.Option(..., "--gold", "-g", readable=False, help="Gold i2b2 XML: a directory or a file."),
    profile: str = profile_option("i2b2"),
    filters: str = typer.Option(
        None, "--filter", help="Score only these tags: CATEGORY or TYPE words, comma-separated."
    ),
    conjunctive: bool = typer.Option(False, "--conjunctive", help="A tag must match every --filter word, not any."),
    invert: bool = typer.Option(False, "--invert", help="Score the tags --filter does not select."),
    official: bool = typer.Option(
        False, "--official", help="Print the summary as evaluate.py phi prints it (to --output if given)."
    ),
    output: Path = OUTPUT_OPTION,
    on_document: Callable[[str], None] | None = None,
    per_document: bool = True,
) -> Report | None:
    """PHI tags of the i2b2 2014 de-identification track, as its evaluate.py phi scores them.

    Token, strict and relaxed (end within 2) evaluations, their HIPAA subsets, binary (PHI or not) and
    per category, each micro and macro (mean and SD over notes). Profiles: [bold]standard[/] (one to one,
    every gold note), [bold]i2b2-2014[/] (kotfic/i2b2_evaluation_scripts evaluate.py exactly).
    """
    from nlpbench.tasks.i2b2 import Selection, official_text

    selection = Selection(tuple(filters.split(",")) if filters is not None else (), conjunctive, invert)
    report = _task_score(
        "i2b2",
        gold,
        pred,
        profile=profile,
        selection=selection,
        per_document=per_document and not official,
        on_document=on_document,
    )
    if not official:
        return report
    text = official_text(report)
    if output is not None:
        files.write_text(output, text)
    else:
        typer.echo(text, nl=False)
    warn(report.warnings)
    return None
