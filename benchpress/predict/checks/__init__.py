"""Checks of scores against the rest of the matrix: values the others contradict. They
name values for a person to look at; they never change or drop one.

- :mod:`~benchpress.predict.checks.consistency`: a given score of a new model that its
  other given scores contradict (leave one out);
- :mod:`~benchpress.predict.checks.suspects`: registry cells that the rest of their row
  and column contradict (`SuspectCheck`).
"""

__all__: list[str] = []
