"""Looker's Open SQL Interface over a generic JDBC runner."""
