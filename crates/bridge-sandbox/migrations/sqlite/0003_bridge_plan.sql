-- What the lifecycle does at its next step when it leaves the usual path (sandbox `outcome`s).

ALTER TABLE bridges ADD COLUMN plan TEXT;
