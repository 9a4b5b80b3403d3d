"""`mmrig sweep`: a campaign of runs over a grid of conditions (docs/campaigns.md): the grid, the campaign
folder and its record (`campaign`), and what a Dask worker runs for one point (`task`)."""
