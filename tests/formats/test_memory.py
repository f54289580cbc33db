"""Files given in memory (``files.MemoryPath``) read as the same files on disk: the same listings, the same
documents, the same one-line errors, named by the name given instead of the path."""

from __future__ import annotations

import pytest

from nlpbench import files, formats
from nlpbench.errors import InputError
from nlpbench.files import MemoryPath
from tests.cli.test_score_relations import GOLD_ANN
from tests.cli.test_score_relations import TEXT as RELATIONS_TEXT
from tests.conformance.i2b2_cases import GOLD as I2B2_GOLD
from tests.conformance.i2b2_cases import TEXT as I2B2_TEXT
from tests.conformance.i2b2_cases import xml

TREE = {"b.xml": "<b/>", "a.xml": "<a/>", ".hidden.xml": "<h/>", "more/c.xml": "<c/>", "notes.txt": "x\r\ny"}


def on_disk(folder, texts: dict[str, str]):
    for relative, text in texts.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(text.encode("utf-8"))
    return folder


def named(items, root) -> list[str]:
    """What messages and listings name, the disk's folder spelled as the memory's name."""
    return [str(item).replace(str(root), "gold") for item in items]


def test_a_folder_in_memory_lists_tests_and_reads_as_the_same_folder_on_disk(tmp_path):
    disk, memory = on_disk(tmp_path / "gold", TREE), MemoryPath.folder("gold", TREE)
    for options in ({}, {"hidden": True}, {"suffix": ".xml"}, {"suffix": "xml", "hidden": True}):
        assert named(files.listed(memory, **options), disk) == named(files.listed(disk, **options), disk)
    unordered = files.listed(memory, hidden=True, ordered=False)
    assert named(unordered, disk) == ["gold/b.xml", "gold/a.xml", "gold/.hidden.xml", "gold/more", "gold/notes.txt"]
    for relative in ("a.xml", "more", "more/c.xml", "none.xml", "more/none"):
        place, given = disk / relative, memory / relative
        assert (files.is_folder(given), files.is_file(given), files.exists(given)) == (
            files.is_folder(place),
            files.is_file(place),
            files.exists(place),
        )
    assert files.read_text(memory / "notes.txt") == files.read_text(disk / "notes.txt") == "x\r\ny"
    assert list(files.text_lines(memory / "notes.txt")) == list(files.text_lines(disk / "notes.txt"))
    assert (memory / "a.xml").with_suffix(".txt").name == "a.txt" and (memory / "more/c.xml").parent == memory / "more"


@pytest.mark.parametrize(
    ("reading", "relative"),
    [
        (files.read_bytes, "none.xml"),
        (files.read_bytes, "more"),
        (files.listed, "a.xml"),
        (files.listed, "none"),
    ],
)
def test_what_cannot_be_read_in_memory_is_the_error_the_disk_gives(tmp_path, reading, relative):
    disk = on_disk(tmp_path / "gold", TREE)
    with pytest.raises(InputError) as on_disk_error:
        reading(disk / relative)
    with pytest.raises(InputError) as in_memory_error:
        reading(MemoryPath.folder("gold", TREE) / relative)
    assert str(in_memory_error.value) == named([on_disk_error.value], disk)[0]


@pytest.mark.parametrize(
    ("fmt", "texts"),
    [
        ("brat", {"doc1.txt": RELATIONS_TEXT, "doc1.ann": GOLD_ANN}),
        ("i2b2", {"100-01.xml": xml(I2B2_TEXT, I2B2_GOLD), "100-02.xml": xml(I2B2_TEXT, I2B2_GOLD[:9])}),
    ],
)
def test_a_format_reads_a_folder_in_memory_as_the_folder_on_disk(tmp_path, fmt, texts):
    reader = formats.get(fmt).read
    in_memory = list(reader(MemoryPath.folder("gold", texts)))
    assert in_memory == list(reader(on_disk(tmp_path / "gold", texts))) and in_memory


def test_a_brat_file_without_its_text_is_named_as_on_disk(tmp_path):
    texts = {"doc1.ann": GOLD_ANN}
    disk = on_disk(tmp_path / "gold", texts)
    with pytest.raises(InputError) as on_disk_error:
        list(formats.get("brat").read(disk))
    with pytest.raises(InputError) as in_memory_error:
        list(formats.get("brat").read(MemoryPath.folder("gold", texts)))
    assert (
        str(in_memory_error.value)
        == named([on_disk_error.value], disk)[0]
        == ("gold/doc1.txt: no .txt file beside the .ann file")
    )


@pytest.mark.parametrize("relative", ["../out.txt", "/etc/passwd", "", "."])
def test_a_folder_holds_only_paths_inside_it(relative):
    with pytest.raises(InputError, match="is not inside the directory"):
        MemoryPath.folder("gold", {relative: "x"})


def test_a_path_cannot_be_a_file_and_a_folder():
    with pytest.raises(InputError, match="'a' is both a file and a folder"):
        MemoryPath.folder("gold", {"a/b.txt": "x", "a": "y"})
