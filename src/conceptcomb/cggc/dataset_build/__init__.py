"""``conceptcomb cggc build``: the CGGC dataset made again from its sources (CommonGen,
CN-100K: `sources`), their sentence embeddings (`embeddings`), the reasoning graphs'
shortest paths and pruning (`paths`), the compositional split (`splits`), the builder that
runs them (`builder`) and the statistics of a built dataset (`stats`, ``conceptcomb cggc
stats``). The tasks read the packaged dataset, not this."""
