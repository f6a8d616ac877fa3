"""Plans: every decision a role makes about one host, made once, in Python.

A role's plan is a pure function of the cluster model, the role's settings and one typed read of
the host (:mod:`.hostread`). The Ansible role and the pyinfra deploy only carry it out: the role's
YAML holds no decision beyond ``when: <plan>.<flag>``, and the deploy follows the same fields, so
both write the same files with the same owners and modes and restart for the same files
(``tests/unit/test_plan_parity.py``).
"""
