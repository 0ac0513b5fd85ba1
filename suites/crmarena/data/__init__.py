"""CRMArena's tasks and the world they are asked about.

- :mod:`.tasks`: tasks in the original record schema, generated on an org from a seed or read
  from a user's task file;
- :mod:`.task_file`: reading and checking a user's task file;
- :mod:`.reference`: the reference solutions of the nine task types (the gold answers);
- :mod:`.generator`: the seeded synthetic org with latent structure behind every task type;
- :mod:`.content`: the vocabulary the generator writes with.

Nothing is imported here: the org (:mod:`suites.crmarena.env.org`) reads only the generator.
"""
