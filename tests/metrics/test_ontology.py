"""Ontology similarity on a hand-built ontology, and on KGTK's documented examples given their counts."""

from __future__ import annotations

from math import log

import pytest

from nlpbench.metrics.ontology import class_similarity, jc_similarity, most_specific_subsumers, superclasses
from nlpbench.model import Ontology, OntologyNode

# entity ─┬─ animal ─┬─ mammal ─┬─ dog ── (rex is an instance of dog)
#         │          │          └─ cat
#         │          └─ bird ──── robin
#         └─ pet (dog and cat are also pets)
ZOO = Ontology(
    1000,
    {
        "entity": OntologyNode(count=1000),
        "animal": OntologyNode(subclass_of=("entity",), count=100),
        "mammal": OntologyNode(subclass_of=("animal",), count=40),
        "bird": OntologyNode(subclass_of=("animal",), count=50),
        "dog": OntologyNode(subclass_of=("mammal", "pet"), count=10),
        "cat": OntologyNode(subclass_of=("mammal", "pet"), count=20),
        "robin": OntologyNode(subclass_of=("bird",), count=5),
        "pet": OntologyNode(subclass_of=("entity",), count=30),
        "rex": OntologyNode(instance_of=("dog",)),
    },
)


def ic(count: float) -> float:
    return log(1000 / count)


def test_superclasses_follow_instance_of_once_then_subclass_of():
    assert set(superclasses(ZOO, "rex")) == {"rex", "dog", "mammal", "animal", "entity", "pet"}
    assert superclasses(ZOO, "rex")["rex"] == ("dog",)
    assert superclasses(ZOO, "dog")["dog"] == ("mammal", "pet")
    # a root has no parent, so (as in KGTK) it is not among its own superclasses
    assert superclasses(ZOO, "entity") == {}


def test_most_specific_subsumers_drop_parents_of_common_classes():
    assert most_specific_subsumers(ZOO, "dog", "cat") == {"mammal", "pet"}
    assert most_specific_subsumers(ZOO, "dog", "robin") == {"animal"}
    assert most_specific_subsumers(ZOO, "dog", "mammal") == {"mammal"}


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # mss {mammal, pet}: pet (count 30) is the more informative, 2·IC(pet) / (IC(dog) + IC(cat))
        ("dog", "cat", 2 * ic(30) / (ic(10) + ic(20))),
        ("dog", "robin", 2 * ic(100) / (ic(10) + ic(5))),
        ("rex", "cat", 2 * ic(30) / (ic(1) + ic(20))),  # an instance without a count counts 1
        ("dog", "mammal", 2 * ic(40) / (ic(10) + ic(40))),
        ("dog", "dog", 1.0),
        ("entity", "dog", 0.0),  # no common superclass
    ],
)
def test_jiang_conrath_by_hand(a, b, expected):
    assert jc_similarity(ZOO, a, b) == pytest.approx(expected, abs=1e-12)
    assert jc_similarity(ZOO, b, a) == pytest.approx(expected, abs=1e-12)


def test_jiang_conrath_values_by_hand_to_six_places():
    assert round(jc_similarity(ZOO, "dog", "cat"), 6) == 0.823407
    assert round(jc_similarity(ZOO, "dog", "robin"), 6) == 0.465005


def test_class_similarity_by_hand():
    dog = ic(10) + ic(40) + ic(100) + ic(1000) + ic(30)  # dog, mammal, animal, entity, pet
    cat = ic(20) + ic(40) + ic(100) + ic(1000) + ic(30)
    shared = ic(40) + ic(100) + ic(1000) + ic(30)
    assert class_similarity(ZOO, "dog", "cat") == pytest.approx(2 * shared / (dog + cat), abs=1e-12)
    robin = ic(5) + ic(50) + ic(100) + ic(1000)
    assert class_similarity(ZOO, "dog", "robin") == pytest.approx(2 * ic(100) / (dog + robin), abs=1e-12)
    assert round(class_similarity(ZOO, "dog", "cat"), 6) == 0.679482
    assert class_similarity(ZOO, "cat", "cat") == pytest.approx(1.0)


def test_unknown_nodes_have_no_similarity():
    assert jc_similarity(ZOO, "dog", "Q42") is None
    assert class_similarity(ZOO, "Q42", "dog") is None


# KGTK's documented examples (kgtk-similarity semantic_similarity/similarity_measures.py). N is the count of
# Q35120 "entity"; only the product of the two compared counts matters, and 501 · 92 (firefighter ·
# paramedic), 501 · 5869 (· police officer) and iron 51, aluminium 29 (iron vs. Neil Young, count 1, gives
# d = M = 31.154228) are counts that reproduce every documented row.
N = 41_575_722
KGTK = Ontology(
    N,
    {
        "Q35120": OntologyNode(count=N, label="entity"),
        "Q28640": OntologyNode(subclass_of=("Q35120",), count=1_423_733, label="profession"),
        "Q17126809": OntologyNode(subclass_of=("Q35120",), count=783, label="rescuer"),
        "Q703534": OntologyNode(subclass_of=("Q35120",), count=390_888, label="employee"),
        "Q107711": OntologyNode(subclass_of=("Q17126809", "Q28640", "Q703534"), count=501, label="firefighter"),
        "Q330204": OntologyNode(subclass_of=("Q17126809", "Q28640"), count=92, label="paramedic"),
        "Q384593": OntologyNode(subclass_of=("Q28640", "Q703534"), count=5869, label="police officer"),
        "Q11344": OntologyNode(subclass_of=("Q35120",), count=996, label="chemical element"),
        "Q11426": OntologyNode(subclass_of=("Q35120",), count=2519, label="metal"),
        "Q12140": OntologyNode(subclass_of=("Q35120",), count=2591, label="medication"),
        "Q677": OntologyNode(instance_of=("Q11344", "Q11426", "Q12140"), count=51, label="iron"),
        "Q663": OntologyNode(instance_of=("Q11344", "Q11426", "Q12140"), count=29, label="aluminium"),
        "Q633": OntologyNode(instance_of=("Q35120",), label="Neil Young"),
    },
)


def test_kgtk_firefighter_paramedic_through_rescuer():
    assert most_specific_subsumers(KGTK, "Q107711", "Q330204") == {"Q17126809", "Q28640"}
    value = jc_similarity(KGTK, "Q107711", "Q330204")
    assert round(value, 6) == 0.893712
    assert value == pytest.approx(0.8937117243814836, abs=1e-15)


def test_kgtk_iron_aluminium_through_chemical_element():
    assert most_specific_subsumers(KGTK, "Q677", "Q663") == {"Q11344", "Q11426", "Q12140"}
    value = jc_similarity(KGTK, "Q677", "Q663")
    assert round(value, 6) == 0.765776
    assert value == pytest.approx(0.7657757628493442, abs=1e-15)


def test_kgtk_other_documented_rows():
    assert jc_similarity(KGTK, "Q107711", "Q384593") == pytest.approx(0.4622472947595052, abs=1e-15)
    assert jc_similarity(KGTK, "Q677", "Q633") == 0.0  # only "entity" in common
