"""Analyses of CGGC results beyond the leaderboard tables: ``conceptcomb cggc report``
(`report`, Table 4 from runs) and Table 6's per-item t-tests of the easy/hard gap
(`per_item`, read by `conceptcomb.cggc.tables`)."""
