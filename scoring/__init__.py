"""The model side of Stepmark.

The PRM core (model, inputs, scoring, training, evaluation, selection) imports no Django and
runs from the command line (``python -m scoring``). The thin Django/Celery layer that runs it
on the database's data lives beside it. Importing this package imports neither torch nor
Django, so the web process can list the app without loading the model stack.
"""
