"""Deploying a placement onto switches, in two halves:

* ``state_diff`` -- the pure half: the diff of intended vs installed state, owners, conflicts and
  the change counts, computed from plain ``SwitchState`` data (no I/O);
* ``apply`` -- the I/O half: read what switches hold and write the diff over P4Runtime
  (``deploy``, ``remove_job``, ``read_state``);
* ``cli`` -- ``dhc-ctl deploy | jobs ... | status | shell``; ``errors`` -- their error types.

Import from the module that defines a name: this package re-exports nothing, so the error types
(imported by most of the controller) never pull in the P4Runtime client.
"""
