"""Which documents a scoring run saw on one side only, and which it left out: counted and reported."""

from __future__ import annotations

from dataclasses import dataclass, field

from nlpbench.errors import shorten


def listed(items: list[str], limit: int = 5) -> str:
    """The first ``limit`` items, comma-separated, with an ellipsis when there are more."""
    return ", ".join(shorten(item) for item in items[:limit]) + (", …" if len(items) > limit else "")


@dataclass
class Coverage:
    """Documents only in the gold, only in the prediction, and predicted documents not scored."""

    gold_documents_only: bool = False
    only_gold: list[str] = field(default_factory=list)
    only_pred: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def admit(self, doc_id: str, in_gold: bool, in_pred: bool) -> bool:
        """Record a document; False when it is not to be scored (prediction only, gold documents only)."""
        if not in_gold and self.gold_documents_only:
            self.ignored.append(doc_id)
            return False
        if not in_pred:
            self.only_gold.append(doc_id)
        elif not in_gold:
            self.only_pred.append(doc_id)
        return True

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
