"""Owned long runs, whatever their kind (training, evolution): the steps every kind's API takes
around its domain functions, the routes that only differ by kind, and the list pages' shell."""
