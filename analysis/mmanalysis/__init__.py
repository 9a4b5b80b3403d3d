"""mmanalysis: pandas loaders, statistics, plots and reports. Not built yet: the analysis issue builds it."""
