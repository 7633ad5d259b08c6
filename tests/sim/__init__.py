"""The simulated sdtune appliance: a root directory, fake illumos commands
and a model of the sd driver's configuration life cycle.

It is an independent oracle for the product's tests and therefore imports
nothing from plugin/.  Start with appliance.py (API and CLI); the fake
commands are dispatched by fakecmd.py.
"""
