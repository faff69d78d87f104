"""Training with DHC: DDP in Mininet (``train``, ``train_worker``, ``train_plots``), accuracy
without a network (``train_sim``), the shared data and models (``train_data``), and torch DDP's
communication hook on loopback (``ddp``, ``ddp_worker``)."""
