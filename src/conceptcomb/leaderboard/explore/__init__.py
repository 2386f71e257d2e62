"""The item explorer: ``conceptcomb explore RUN... --out DIR`` writes one self-contained page
(no server, no network) showing each item of every run beside `compare`'s statistics."""
