"""Query terms for the trigram keyword index.

Words of three or more characters that are not stop words; a run of Chinese, Japanese or Korean is
split into its overlapping 3-character windows, because the trigram index matches each anywhere and
those scripts have no spaces to split on.
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset(
    "the and for with that this from are was were have has had what which how where when who why you your "
    "can could does did not but all any its into about there their them they then than also just only will "
    "would should some such more most other our out over very".split()
)
_SCRIPTS = r"\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_WORD = re.compile(rf"[{_SCRIPTS}]+|[\w.+#-]+", re.UNICODE)
CJK = re.compile(rf"[{_SCRIPTS}]")


def index_terms(text: str, cap: int = 48) -> list[str]:
    found: list[str] = []
    for token in _WORD.findall(text.casefold()):
        token = token.strip(".-")
        pieces = [token[i : i + 3] for i in range(len(token) - 2)] if CJK.match(token) else [token]
        for piece in pieces:
            if len(piece) >= 3 and piece not in STOP_WORDS and piece not in found:
                found.append(piece)
    return found[:cap]
