"""The job service (``dhc-ctl serve``): agents join jobs with nothing but its address.

``store`` (SQLite state), ``fabric`` (placement/deployment/epochs, serialised per fabric),
``sessions`` (jobs, sessions, tokens, refusals), ``servicer`` (gRPC), ``server`` (start-up,
watcher), ``cli`` (commands).  The wire protocol is ``dhcwire/jobservice/jobservice.proto``.
"""
