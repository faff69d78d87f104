"""End-to-end AllReduce in Mininet: DHC against the host ring (``e2e``, ``e2e_plots``) and where
the time of one AllReduce goes (``e2e_profile`` with one ``e2e_profile_worker`` per host)."""
