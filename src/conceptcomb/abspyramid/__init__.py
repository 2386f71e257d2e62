"""AbsPyramid: abstraction detection and generation (Wang et al., NAACL 2024 Findings)."""
