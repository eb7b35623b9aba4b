"""Who took an inbox item on ("assign to me"): an operator action, so each assignment is a
signed decision with its audit row and an ``assignments`` row, in one transaction
(``service``); ``proctor verify`` names an assignment without its decision (``verify``).
The store's triggers are core/storage/assign_sql.py."""
