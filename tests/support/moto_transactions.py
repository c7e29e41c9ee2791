"""moto's ``TransactWriteItems`` without its copy of every table it touches.

moto (5.x) makes a transaction all-or-nothing by deep-copying each table it writes to before
applying it, and putting the copy back when an action fails. The copy holds every item and the
table's whole stream, so a transaction's cost grows with everything the session ever wrote to
that table: 0.17 s at 1,000 items, 1.6 s at 6,000 on this machine (docs/pitfalls.md). Since each
``memory_add`` is a transaction (the memory and its dedup claim), a long suite slowed until
botocore's 5 s read timeout fired and retried writes that had committed.

``install`` replaces it with the same rules checked first and applied after: every action's
condition is evaluated against the current items (with moto's own parser), and only when all
hold are the writes applied, so nothing needs undoing. The answer is moto's: the same
validations, and ``TransactionCanceledException`` with one cancellation reason per action in
order (``None`` for the actions that were fine). Like moto's, it is not atomic against another
thread's writes (tests that race serialise their calls: ``aws_stack.SerialisedDynamoDB``).
``tests/unit/test_moto_transactions.py`` holds it to the original on the cases we use.
"""

from __future__ import annotations

from typing import Any

from tests.support.moto_patch import MotoPatch


def _transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    targets: set[tuple[str, str]] = set()
    actions: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    errors: list[tuple[Any, Any, Any]] = []
    for item in transact_items:
        if len(item) > 1:
            raise TransactWriteSingleOpException
        op_type, op = next(iter(item.items()))
        if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
            raise ValueError("Unsupported transaction operation")
        table_name = op["TableName"]
        if op_type == "Put":
            table = self.get_table(table_name)
            attrs = op["Item"]
            key = {table.hash_key_attr: attrs[table.hash_key_attr]}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = attrs[table.range_key_attr]
        else:
            key = op["Key"]
        target = (str(table_name), str(dict(sorted(key.items()))))
        if target in targets:
            raise MultipleTransactionsException()
        targets.add(target)
        actions.append((op_type, op, key))
        condition = op.get("ConditionExpression")
        if condition is None:
            errors.append((None, None, None))
            continue
        current = self.get_item(table_name, key)
        check = get_filter_expression(
            condition, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
        )
        if check.expr(current):
            errors.append((None, None, None))
            continue
        old = None
        if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
            old = current.to_json()["Attributes"]
        errors.append(("ConditionalCheckFailed", ConditionalCheckFailed(item=old).message, old))
    if any(code is not None for code, _, _ in errors):
        raise TransactionCanceledException(errors)
    for op_type, op, key in actions:
        names, values = op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
        if op_type == "Put":
            self.put_item(op["TableName"], op["Item"], expression_attribute_names=names,
                          expression_attribute_values=values)  # fmt: skip
        elif op_type == "Delete":
            self.delete_item(op["TableName"], key, expression_attribute_names=names,
                             expression_attribute_values=values)  # fmt: skip
        elif op_type == "Update":
            self.update_item(op["TableName"], key, update_expression=op["UpdateExpression"],
                             expression_attribute_names=names, expression_attribute_values=values)  # fmt: skip


_PATCH = MotoPatch("moto.dynamodb.models:DynamoDBBackend", transact_write_items=_transact_write_items)
#: patch moto's DynamoDB backend class (idempotent)
install = _PATCH.install


def original() -> Any:
    """moto's own implementation (for the test that compares them)."""
    return _PATCH.original("transact_write_items")
