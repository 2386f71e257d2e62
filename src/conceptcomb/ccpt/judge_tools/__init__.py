"""Tools about CCPT's judge rather than the tasks: ``conceptcomb plan`` counts what a run
will ask the judge before it runs (`plan`); ``conceptcomb judge calibrate`` correlates a
judge with the dataset's annotators, the paper's section 6.1 check (`calibration`)."""
