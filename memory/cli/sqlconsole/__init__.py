"""The read-only console over a store: ``tooltray sql`` and ``tooltray history``.

Read-only guards for SQLite (:mod:`.guard`), read-only engines (:mod:`.readonly`), one statement
on a driver connection (:mod:`.statement`), the PostgreSQL reader role (:mod:`.sql_pg`) and the
timeline (:mod:`.timeline`). It reads the store's tables but is no part of the store protocol:
the working memory never runs it. A plain SQLite file is read with the stdlib only.
"""
