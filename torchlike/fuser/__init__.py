"""The fuser: find fusible elementwise regions (``partition``), compile and cache one kernel per
region and input signature, and run it, falling back to the interpreter on any failure.

``torchlike.fuser.partition.fuse(graph)`` returns a copy of ``graph`` in which every fusible
region is a ``prim::FusionGroup`` node holding its subgraph in ``attrs["Subgraph"]``.

The fuser sits below the code generators: ``backend`` analyses a group and keeps a registry of
backends by name, ``kernel_spec`` and ``render`` hold what every generator shares, and
``torchlike.backends`` (above the fuser and both backends) installs ``cpu``, ``cuda`` and
``cuda-emulated`` into the registry.  Nothing here imports a backend.
"""
