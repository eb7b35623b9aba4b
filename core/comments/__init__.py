"""Comment threads on inbox items (issue 35): ``journal.comments`` adds a comment to an
approval, a question, a memory conflict or an effect and reads an item's thread. A comment is
evidence: one ``comments`` row written with its decision (signed with the operator's key
when they have one) and its audit row, chained per item; the store's triggers are
core/storage/comment_sql.py, ``proctor verify``'s checks are ``verify``."""
