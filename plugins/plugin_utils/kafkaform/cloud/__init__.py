"""Cloud clusters on AWS with boto3: availability zone = rack, found by tags, idempotent.

``spec`` loads and validates the declarative cluster spec, ``placement`` puts hosts in zones and
gives them ids, ``provision`` finds or creates the EC2 resources, ``inventory`` writes the Ansible
inventory the playbooks read, and ``cli`` registers `kafkaform cloud plan|up|inventory|down`.
"""
