"""Which documents a scoring run saw on one side only, and which it left out: counted and reported."""

from __future__ import annotations

from dataclasses import dataclass, field

from nlpbench.errors import InputError, shorten
from nlpbench.files import Input


def listed(items: list[str], limit: int = 5) -> str:
    """The first ``limit`` items, comma-separated, with an ellipsis when there are more."""
    return ", ".join(shorten(item) for item in items[:limit]) + (", …" if len(items) > limit else "")


def no_gold(path: Input | None, unit: str = "documents") -> InputError:
    """The error of a gold side that holds nothing to score against: every gold count would be 0 and the
    report's zeros would mean nothing. (An empty prediction is valid: it is scored, with a warning.)"""
    return InputError(f"the gold holds no {unit}: there is nothing to score against", path)


@dataclass
class Coverage:
    """Documents only in the gold, only in the prediction, and predicted documents not scored; how many
    gold documents were seen."""

    gold_documents_only: bool = False
    only_gold: list[str] = field(default_factory=list)
    only_pred: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    gold: int = 0

    def admit(self, doc_id: str, in_gold: bool, in_pred: bool) -> bool:
        """Record a document; False when it is not to be scored (prediction only, gold documents only)."""
        self.gold += in_gold
        if not in_gold and self.gold_documents_only:
            self.ignored.append(doc_id)
            return False
        if not in_pred:
            self.only_gold.append(doc_id)
        elif not in_gold:
            self.only_pred.append(doc_id)
        return True

    def check_gold(self, path: Input | None) -> None:
        """An :class:`InputError` (:func:`no_gold`) when no gold document was seen."""
        if not self.gold:
            raise no_gold(path)

    def warnings(self) -> list[str]:
        messages = []
        for side, items in (("gold", self.only_gold), ("prediction", self.only_pred)):
            if items:
                messages.append(f"{len(items)} documents only in the {side}, scored against nothing: {listed(items)}")
        if self.ignored:
            messages.append(
                f"{len(self.ignored)} documents only in the prediction were not scored (gold documents only): "
                f"{listed(self.ignored)}"
            )
        return messages
