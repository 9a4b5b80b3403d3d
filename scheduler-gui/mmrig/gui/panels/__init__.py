"""The main window's panels, one concept each: `connection` (bench or serial ports), `run_settings` (the
paper's sliders and the rest of a run's settings), `live` (timecode, LEDs, table, plots, statistics, progress)
and `runs_folder` (where runs are saved, the dialogs that choose runs on disk)."""
