"""Quality of a workforce's work: control items on rated screens, the typing record of written
captions and its review, reports of problem images (docs/crowd-quality.md)."""
