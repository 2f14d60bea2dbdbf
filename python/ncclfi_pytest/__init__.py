"""pytest plugin for ncclfi: scenario files as pytest items, and a fixture that runs a scenario.

It shells out to the ``ncclfi`` binary and reads its ``--json`` output; it needs nothing but pytest.
The binary is ``--ncclfi-bin``, else ``$NCCLFI``, else ``ncclfi`` on ``PATH``.
"""

from ncclfi_pytest.runner import NcclfiError, NcclfiRunner, SuiteResult

__all__ = ["NcclfiError", "NcclfiRunner", "SuiteResult"]
