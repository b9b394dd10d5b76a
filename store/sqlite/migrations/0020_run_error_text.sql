-- 0020_run_error_text: the run listing's text search (RunListParams.Text)
-- reads the message of a run's error, folded to lower case in Go
-- (sqlrow.ErrorText), instead of the error's JSON, whose field names
-- matched every failed run and whose escapes ("\u003c") hid the text.
-- Written with the error; the runs stored before get their message folded
-- by SQLite's lower(), which changes ASCII letters only.
ALTER TABLE runs ADD COLUMN error_text TEXT;
UPDATE runs SET error_text = lower(json_extract(error, '$.message'))
    WHERE error IS NOT NULL AND json_valid(error) AND json_type(error) = 'object';
