import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest


@pytest.fixture
def ranking_rows(monkeypatch):
    """The training rows ``FeatureDropRefit``'s ranking measures, one array per fit (a spy on ``_rank``)."""
    import budget_extras.budgetprune._feature_drop as fd

    seen = []
    real = fd.FeatureDropRefit._rank

    def rank(self, full):
        seen.append(self._rows["rank"][1].copy())
        return real(self, full)

    monkeypatch.setattr(fd.FeatureDropRefit, "_rank", rank)
    return seen
