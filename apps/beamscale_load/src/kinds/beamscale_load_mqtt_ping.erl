%% @doc The `mqtt' kind's keepalive: a PINGREQ every half keepalive while the user thinks (the
%% timer's message `{mqtt_ping, Socket}' is the socket's, handed to the kind's `handle_push/3'),
%% or before its next request; the broker would close a connection silent for 1.5 keepalives.
%% The timer and its interval are kept by socket in the user's process, as the reader keeps
%% its bound.
-module(beamscale_load_mqtt_ping).

-export([arm/2, disarm/1, ping/1, beat/1]).

%% @doc The timer started for a keepalive of `Ms' (0: none).
-spec arm(term(), non_neg_integer()) -> ok.
arm(_S, 0) -> ok;
arm(S, Ms) ->
    put({?MODULE, S}, {erlang:send_after(max(1, Ms div 2), self(), {mqtt_ping, S}), Ms}),
    ok.

%% @doc The timer stopped, its message dropped.
-spec disarm(term()) -> ok.
disarm(S) ->
    case erase({?MODULE, S}) of
        undefined -> ok;
        {Ref, _} -> _ = erlang:cancel_timer(Ref),
                    receive {mqtt_ping, S} -> ok after 0 -> ok end
    end.

%% @doc Its timer fired: a PINGREQ sent, the timer started again.
-spec ping(term()) -> ok.
ping(S) ->
    case get({?MODULE, S}) of
        {_, Ms} ->
            _ = beamscale_load_tcp:send(S, beamscale_load_mqtt_codec:encode(#{type => pingreq})),
            arm(S, Ms);
        undefined -> ok
    end.

%% @doc A ping due before a request.
-spec beat(term()) -> ok.
beat(S) ->
    receive {mqtt_ping, S} -> ping(S) after 0 -> ok end.
