-- Plans as JSON (`crate::records::Plan`), from the text of earlier versions: `swapFailed`, `failed`, and
-- `delayed:<deposit tx hash>:<block>` (the sandbox's own hashes, which hold no `:`).

UPDATE bridges SET plan = json_quote(plan) WHERE plan IN ('swapFailed', 'failed');
UPDATE bridges SET plan = json_object('delayed', json_object(
        'txHash', substr(plan, 9, instr(substr(plan, 9), ':') - 1),
        'block', CAST(substr(plan, 9 + instr(substr(plan, 9), ':')) AS INTEGER)))
    WHERE plan LIKE 'delayed:%';
