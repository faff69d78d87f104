"""The software switch's speed: in process (``softswitch``), on ports (``softswitch_ports``), the
native back end against a C forwarder (``softswitch_native``, C sources in ``native/``), BMv2
side by side (``bmv2``, ``bmv2_plots``), and the in-process switch that tests share
(``inprocess``)."""
