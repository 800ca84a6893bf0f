"""run import provenance: the export's digest, who imported it and when, what the export said it was

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

#: The import_format of a restored export whose run HEMRA had executed elsewhere
#: (services/store/exporting.py says the same for new restores).
RESTORED_FORMAT = "hemra-export 1"


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("export_digest", sa.String(length=80), server_default="", nullable=False))
        batch_op.add_column(sa.Column("imported_by", sa.String(length=300), server_default="", nullable=False))
        batch_op.add_column(sa.Column("import_time", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("original_id", sa.String(length=32), server_default="", nullable=False))
        batch_op.add_column(sa.Column("original_kind", sa.String(length=16), server_default="", nullable=False))
        batch_op.add_column(sa.Column("original_label", sa.String(length=300), server_default="", nullable=False))
    _mark_restored_exports()
    # Imports recorded before: the store recorded each when it was imported.
    op.execute("UPDATE runs SET import_time = create_time WHERE kind = 'import' AND original_kind = ''")


def _mark_restored_exports() -> None:
    """Restores used to keep an exported run's kind, so a store may hold imports that say they
    were executed here. A run HEMRA executes has a job for every attempt it ever made (jobs are
    never deleted) and a restore writes none: a run with attempts and no job was restored. It
    becomes the import it is, what it said kept as its original kind; its ID stays (other rows
    refer to it), and who imported it, and when, was never recorded."""
    runs = sa.table(
        "runs",
        sa.column("id"),
        sa.column("label"),
        sa.column("kind"),
        sa.column("import_format"),
        sa.column("original_id"),
        sa.column("original_kind"),
        sa.column("original_label"),
    )
    attempts = sa.table("attempts", sa.column("run_id"))
    jobs = sa.table("jobs", sa.column("run_id"))
    op.get_bind().execute(
        runs.update()
        .where(
            runs.c.kind == "run",
            sa.exists().where(attempts.c.run_id == runs.c.id),
            ~sa.exists().where(jobs.c.run_id == runs.c.id),
        )
        .values(
            kind="import",
            import_format=RESTORED_FORMAT,
            original_id=runs.c.id,
            original_kind="run",
            original_label=runs.c.label,
        )
    )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("original_label")
        batch_op.drop_column("original_kind")
        batch_op.drop_column("original_id")
        batch_op.drop_column("import_time")
        batch_op.drop_column("imported_by")
        batch_op.drop_column("export_digest")
