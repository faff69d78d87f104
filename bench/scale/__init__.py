"""How DHC scales with workers, density, window and model (``scale``, ``scale_plots``)."""
