"""The fuser: find fusible elementwise regions (``partition``), compile and cache one kernel per
region and input signature, and run it, falling back to the interpreter on any failure.

``torchlike.fuser.partition.fuse(graph)`` returns a copy of ``graph`` in which every fusible
region is a ``prim::FusionGroup`` node holding its subgraph in ``attrs["Subgraph"]``.
"""
