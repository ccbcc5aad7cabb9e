"""Applying the series to a cached copy or onto a new branch of a user's checkout.

``engine`` applies patch by patch and records outcomes, ``detection`` recognizes a patch already upstream,
``copies`` applies to a cached copy or a checkout, ``lock`` and ``signals`` keep a checkout safe from concurrent
applies and interrupts, ``report`` prints the outcome table.
"""
