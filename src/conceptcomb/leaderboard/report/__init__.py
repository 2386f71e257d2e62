"""``conceptcomb report``: the runs it shows (`runs`), the benchmarks' tables and the papers'
rows (`tables`, `published`), ranking with confidence (`ranking`), written out (`build`,
`render`)."""
