"""The NLP Sandbox client's own fixture gives the values its upstream tests assert.

Expected values: nlpsandbox/nlpsandbox-client @ e51720b, test/client/test_evaluation.py
(profile ``nlpsandbox``) and the same test before the January 2022 tokeniser
change, bd2ad6d~1 (profile ``nlpsandbox-legacy``; only the location token row
differs). Rows: (F1, precision, recall) for instance relax, instance strict,
token, and type where the scorer reports it.
"""

import pytest

from nlpbench.tasks.sandbox import score_sandbox

UPSTREAM = {
    "date": {"instance_relax": (0.75, 0.75, 0.75), "instance_strict": (0.5, 0.5, 0.5), "token": (0.67, 0.6, 0.75)},
    "person_name": {
        "instance_relax": (0.5, 0.5, 0.5),
        "instance_strict": (0.5, 0.5, 0.5),
        "token": (0.77, 0.83, 0.71),
    },
    "location": {
        "instance_relax": (0.75, 0.75, 0.75),
        "instance_strict": (0.5, 0.5, 0.5),
        "token": (0.8, 1.0, 0.67),
        "type": (0.5, 0.5, 0.5),
    },
    "id": {m: (1, 1, 1) for m in ("instance_relax", "instance_strict", "token", "type")},
    "contact": {m: (1, 1, 1) for m in ("instance_relax", "instance_strict", "token", "type")},
}
LEGACY_LOCATION_TOKEN = (0.67, 0.75, 0.6)


def scored(vectors, annotation_type, profile):
    folder = vectors / "nlpsandbox-client"
    report = score_sandbox(folder / "goldstandard.json", folder / "prediction.json", annotation_type, profile=profile)
    return {row["metric"]: (row["f1"], row["precision"], row["recall"]) for row in report.scores
            if "label" not in row and "average" not in row}  # fmt: skip


@pytest.mark.vectors
@pytest.mark.parametrize("annotation_type", sorted(UPSTREAM))
def test_nlpsandbox_profile_gives_the_upstream_values(vectors, annotation_type):
    assert scored(vectors, annotation_type, "nlpsandbox") == UPSTREAM[annotation_type]


@pytest.mark.vectors
@pytest.mark.parametrize("annotation_type", sorted(UPSTREAM))
def test_legacy_profile_gives_the_pre_2022_upstream_values(vectors, annotation_type):
    expected = dict(UPSTREAM[annotation_type])
    if annotation_type == "location":
        expected["token"] = LEGACY_LOCATION_TOKEN
    assert scored(vectors, annotation_type, "nlpsandbox-legacy") == expected


@pytest.mark.vectors
def test_standard_profile_counts_on_the_fixture(vectors):
    # person names in note 3: gold "DrSmith Ke" (length 11 in the file) at 20, predicted "Smith Ke" at 22
    rows = scored(vectors, "person_name", "standard")
    assert rows["instance_strict"] == (0.5, 0.5, 0.5)
