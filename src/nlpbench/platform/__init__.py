"""Submissions: a queue in the store, workers that validate, annotate and score, quotas and time budgets.

:mod:`~nlpbench.platform.queue` takes submissions in (checking the quota
atomically) and hands them to workers under leases;
:mod:`~nlpbench.platform.validation` checks a tool as the NLP Sandbox
controller did; :mod:`~nlpbench.platform.worker` runs a submission from
claim to result; :mod:`~nlpbench.platform.scoring` scores stored predictions
into per-document results. ``platform`` joins ``store``, ``runner`` and ``tasks``.
"""
