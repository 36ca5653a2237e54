"""`rebalance capture`: a live cluster's rebalances as membership events, over the clients of `streaming.kafka`.

The offsets topic's records decoded and translated into events; ListGroups and ConsumerGroupDescribe in our
own encoding for `--source describe`; the captured topics' traffic; the capture's loops and outputs."""
