-- Hearth schema 10: what the user trusted of each project. `trusted_digest` is the
-- digest of what the project's `project.md` gives its agents (instructions, and the
-- sources reaching outside its folder or to the web) when the user last accepted it:
-- made by Hearth, adopted with the user's consent, or trusted again after a change. A
-- project whose file no longer matches it takes no new turns until the user looks again.
-- NULL: never recorded (projects registered before this schema), which asks the same.

ALTER TABLE projects ADD COLUMN trusted_digest TEXT;
