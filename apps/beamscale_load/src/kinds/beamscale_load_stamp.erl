%% @doc The publish stamp of the messaging kinds (amqp, mqtt): the send time written at the head
%% of a message's payload by the publishing user, read by the user it is delivered to, which
%% records the publish-to-delivery time (histogram `delivery_time', which the kinds declare in
%% `measures/0'). Both users run in this node or on this machine's clock; a message without
%% the tag (another tool's) is not measured.
-module(beamscale_load_stamp).

-export([size/0, stamp/0, stamped/1, delivered/1]).

%% A tag, and the send time in µs since the epoch.
-define(TAG, "bs\0t").
-define(SIZE, 12).
%% A delivery time beyond an hour is another run's message (or another clock's): not recorded.
-define(MAX_US, 3600000000).

%% @doc The bytes a stamp takes.
-spec size() -> pos_integer().
size() -> ?SIZE.

%% @doc A stamp: the tag and the time now.
-spec stamp() -> binary().
stamp() -> <<?TAG, (os:system_time(microsecond)):64>>.

%% @doc A payload of at least ?SIZE bytes with its head replaced by a stamp (its size kept);
%% a shorter one as it is.
-spec stamped(binary()) -> binary().
stamped(<<_:?SIZE/binary, Rest/binary>>) -> <<(stamp())/binary, Rest/binary>>;
stamped(Short) -> Short.

%% @doc A delivered payload's head (its first ?SIZE bytes at least): its publish-to-delivery
%% time observed if it has a stamp.
-spec delivered(binary()) -> ok.
delivered(<<?TAG, Us:64, _/binary>>) ->
    case os:system_time(microsecond) - Us of
        T when T >= 0, T < ?MAX_US -> beamscale_load_request:observe(delivery_time, T);
        _ -> ok
    end;
delivered(_) -> ok.
