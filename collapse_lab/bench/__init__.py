"""Speed measurement: the fast training path against a reference loop built like the
official code (``reference``), and ``collapse-lab bench`` (``run``)."""
