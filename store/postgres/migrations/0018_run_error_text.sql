-- 0018_run_error_text: the run listing's text search (RunListParams.Text)
-- reads the message of a run's error, folded to lower case in Go
-- (sqlrow.ErrorText), instead of the error's JSON, whose field names
-- matched every failed run and whose escapes ("\u003c") hid the text.
-- Written with the error; the runs stored before get their message folded
-- by lower() here (an error that is not a JSON object has no message).
ALTER TABLE runs ADD COLUMN error_text TEXT;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT id, error FROM runs WHERE error LIKE '{%' LOOP
        BEGIN
            UPDATE runs SET error_text = lower(r.error::json->>'message') WHERE id = r.id;
        EXCEPTION WHEN others THEN
            NULL;
        END;
    END LOOP;
END
$$;
