%% @doc Cutting an XMPP stream into its parts, bounded: the stream header, each top-level
%% stanza (whole, as bytes), the stream's end. Nothing is parsed into terms beyond what the
%% `xmpp' kind reads (a stanza's name, a few attributes, an error's condition, a body): no atom
%% is made from server data, an element deeper than ?MAX_DEPTH or a stanza longer than the
%% target's `max_reply_bytes' is an error, and attributes are read from the opening tag only.
-module(beamscale_load_xmpp_stream).

-export([next/2, next/3, name/1, attr/2, condition/1, body/1, has/2, format_error/1]).

-define(MAX_DEPTH, 64).
%% A condition or element name in a reason is cut to this many bytes (a bounded reason text).
-define(MAX_NAME, 40).
%% A buffer up to this size is scanned in place at its first scan (`top/3').
-define(IN_PLACE, 4096).

-type part() :: {header, binary()} | {stanza, binary()} | stream_end.
%% Where a scan of an incomplete stanza stopped: a buffer that only grew since is scanned on
%% from there, not again from its start (a 20 000-item roster read in segments was quadratic).
%% `start' is a new scan; the pair is opaque to callers.
-type cursor() :: start | {non_neg_integer(), non_neg_integer()}.
-export_type([cursor/0]).

%% @doc The next part of `Buf': `{ok, Part, Rest}', `more' (an incomplete part) or an error.
-spec next(binary(), pos_integer()) ->
    {ok, part(), binary()} | more | {error, {?MODULE, term()}}.
next(Buf, Max) ->
    case next(Buf, Max, start) of
        {more, _} -> more;
        Other -> Other
    end.

%% @doc As `next/2', from where the last scan of `Buf' stopped (`start' at first), when `Buf'
%% only grew at its end since: `{more, Cursor}' for the next call.
-spec next(binary(), pos_integer(), cursor()) ->
    {ok, part(), binary()} | {more, cursor()} | {error, {?MODULE, term()}}.
next(Buf, Max, Cursor) ->
    %% Read through BIFs and small parts only: a binary match on `Buf' itself would make the
    %% runtime copy it at the caller's next append (1.3 s of copies for a 2 MB roster in
    %% 1 460-byte segments).
    Off = first_text(Buf, 0),
    B = binary:part(Buf, Off, byte_size(Buf) - Off),
    case binary:part(B, 0, min(16, byte_size(B))) of
        <<>> -> {more, start};
        <<"<?", _/binary>> -> after_seq(B, <<"?>">>, Max, fun next/2);
        <<"<stream:stream", _/binary>> ->
            case binary:match(B, <<">">>) of
                {At, 1} -> {ok, {header, binary:part(B, 0, At)}, rest(B, At + 1)};
                nomatch -> bounded(B, Max)
            end;
        <<"</stream:stream>">> -> {ok, stream_end, rest(B, 16)};
        <<"<", C, _/binary>> when C =/= $/, C =/= $! -> top(B, Max, Cursor);
        _ when byte_size(B) < 16 -> {more, start};
        _ -> {error, {?MODULE, not_xmpp}}
    end.

first_text(Buf, I) when I < byte_size(Buf) ->
    case binary:at(Buf, I) of
        C when C =:= $\s; C =:= $\n; C =:= $\r; C =:= $\t -> first_text(Buf, I + 1);
        _ -> I
    end;
first_text(_Buf, I) -> I.

rest(B, At) -> binary:part(B, At, byte_size(B) - At).

after_seq(B, Seq, Max, Then) ->
    case binary:match(B, Seq) of
        {At, L} ->
            case Then(binary:part(B, At + L, byte_size(B) - At - L), Max) of
                more -> {more, start};
                Other -> Other
            end;
        nomatch -> bounded(B, Max)
    end.

bounded(B, Max) -> bounded(B, Max, start).

bounded(B, Max, _) when byte_size(B) > Max -> {error, {?MODULE, {too_big, Max}}};
bounded(_B, _Max, Cursor) -> {more, Cursor}.

%% One top-level element: tags counted from its start (or the cursor) until its depth is 0.
top(B, Max, Cursor) ->
    {Pos, Depth} = case Cursor of
                       start -> {0, 0};
                       {_, _} -> Cursor
                   end,
    %% A copy of the bytes from the cursor on: matched byte by byte, it leaves `B' (the
    %% caller's buffer) writable, so the caller's next append does not copy it. A first scan of
    %% a small buffer (a chat, most often all of one segment) is made on `B' itself: should it
    %% be incomplete, the next append copies at most ?IN_PLACE bytes once, and the scans after
    %% it go on from the cursor on copies (the copy and its allocation were a tenth of a
    %% received chat's instructions).
    New = case Cursor of
              start when byte_size(B) =< ?IN_PLACE -> B;
              _ -> binary:copy(binary:part(B, Pos, byte_size(B) - Pos))
          end,
    case text(New, Pos, Depth) of
        {done, End} when End > Max -> {error, {?MODULE, {too_big, Max}}};
        {done, End} -> {ok, {stanza, binary:part(B, 0, End)}, rest(B, End)};
        {more, At, D} -> bounded(B, Max, {At, D});
        {error, _} = E -> E
    end.

%% The tags told byte by byte, from `I' (the position in the stanza of the bytes' first) at depth
%% `D': a tag ends at the first `>' after its `<' (a `<' before it is inside the tag). CDATA and
%% comments are skipped to their ends. One pass in compiled matching: searching the positions of
%% `<' and `>' first (binary:matches) took 1.2 times as long and made 160 000 tuples a 2 MB roster.
text(<<A, B, C, E, R/binary>>, I, D) when A =/= $<, B =/= $<, C =/= $<, E =/= $< ->
    text(R, I + 4, D);
text(<<$<, R/binary>>, I, D) -> lt(R, I, D);
text(<<_, R/binary>>, I, D) -> text(R, I + 1, D);
text(<<>>, I, D) -> {more, I, D}.

lt(<<$/, R/binary>>, I, D) -> tag(R, I, I + 2, D, close, $/);
lt(<<$!, _/binary>> = R, I, D) -> special(R, I, D);
lt(<<$?, _/binary>>, _I, _D) -> {error, {?MODULE, not_xmpp}};
lt(<<>>, I, D) -> {more, I, D};
lt(_R, _I, D) when D >= ?MAX_DEPTH -> {error, {?MODULE, too_deep}};
lt(R, I, D) -> tag(R, I, I + 1, D, open, $<).

%% In a tag opened at `At', at `J'; `Prev' the byte before.
tag(<<$>, R/binary>>, _At, J, D, close, _Prev) ->
    case D of
        1 -> {done, J + 1};
        _ -> text(R, J + 1, D - 1)
    end;
tag(<<$>, _/binary>>, _At, J, 0, open, $/) -> {done, J + 1};
tag(<<$>, R/binary>>, _At, J, D, open, $/) -> text(R, J + 1, D);
tag(<<$>, R/binary>>, _At, J, D, open, _Prev) -> text(R, J + 1, D + 1);
tag(<<A, B, C, E, R/binary>>, At, J, D, How, _Prev)
  when A =/= $>, B =/= $>, C =/= $>, E =/= $> ->
    tag(R, At, J + 4, D, How, E);
tag(<<C, R/binary>>, At, J, D, How, _Prev) -> tag(R, At, J + 1, D, How, C);
tag(<<>>, At, _J, D, _How, _Prev) -> {more, At, D}.

%% `<!' opens CDATA or a comment, skipped whole; anything else is not XMPP. An opening cut
%% short by the buffer's end is `more' from its `<'.
special(R, I, D) ->
    T = binary:part(R, 0, min(8, byte_size(R))),
    Fits = fun(Open) -> binary:longest_common_prefix([T, Open]) =:=
                            min(byte_size(T), byte_size(Open)) end,
    case [O || {Open, _} = O <- [{<<"![CDATA[">>, <<"]]>">>}, {<<"!--">>, <<"-->">>}],
               Fits(Open)] of
        [{Open, Close} | _] when byte_size(T) >= byte_size(Open) ->
            case binary:match(R, Close) of
                nomatch -> {more, I, D};
                {End, L} ->
                    Skip = End + L,
                    text(binary:part(R, Skip, byte_size(R) - Skip), I + 1 + Skip, D)
            end;
        [_ | _] -> {more, I, D};
        [] -> {error, {?MODULE, not_xmpp}}
    end.

%% @doc The element name of a stanza or header (`<<"message">>', `<<"stream:features">>').
-spec name(binary()) -> binary().
name(<<"<", S/binary>>) -> binary:part(S, 0, name_end(S, 0)).

%% A scan of the name's bytes (a match of five patterns compiled them at each stanza).
name_end(<<C, _/binary>>, N) when C =:= $\s; C =:= $>; C =:= $/; C =:= $\n; C =:= $\t -> N;
name_end(<<_, R/binary>>, N) -> name_end(R, N + 1);
name_end(<<>>, N) -> N.

%% @doc An attribute of the opening tag (either quote), or `undefined'.
-spec attr(binary(), binary()) -> binary() | undefined.
attr(S, Name) ->
    Open = case binary:match(S, pattern(<<">">>)) of
               {At, _} -> binary:part(S, 0, At);
               nomatch -> S
           end,
    value(Open, pattern({attr, Name})).

value(Open, Keys) ->
    case binary:match(Open, Keys) of
        nomatch -> undefined;
        {At, L} ->
            Q = binary:at(Open, At + L - 1),
            From = At + L,
            case binary:match(Open, pattern(<<Q>>), [{scope, {From, byte_size(Open) - From}}])
            of
                {End, _} -> binary:part(Open, From, End - From);
                nomatch -> undefined
            end
    end.

%% @doc The condition of an error stanza or a SASL failure: the name of the first element inside
%% `<error>' or `<failure>' (or inside `<stream:error>'), cut to ?MAX_NAME bytes.
-spec condition(binary()) -> binary().
condition(S) ->
    Inner = case binary:match(S, [<<"<error">>, <<"<failure">>, <<"<stream:error">>]) of
                {At, _} -> binary:part(S, At + 1, byte_size(S) - At - 1);
                nomatch -> <<>>
            end,
    case binary:match(Inner, <<"<">>) of
        {I, 1} ->
            N = name(binary:part(Inner, I, byte_size(Inner) - I)),
            binary:part(N, 0, min(?MAX_NAME, byte_size(N)));
        nomatch -> <<"unknown">>
    end.

%% @doc The text of a message's `<body>', or `undefined'.
-spec body(binary()) -> binary() | undefined.
body(S) ->
    case binary:match(S, pattern(<<"<body>">>)) of
        {At, L} ->
            From = At + L,
            case binary:match(S, pattern(<<"</body>">>), [{scope, {From, byte_size(S) - From}}])
            of
                {End, _} -> binary:part(S, From, End - From);
                nomatch -> undefined
            end;
        nomatch -> undefined
    end.

%% The compiled search patterns of the reader's lookups, kept in the user's process: a
%% pattern compiled at each call was 6 % of a chat's instructions (cg_diff of
%% bench/xmpp_vs_tsung.sh). Keyed by the literal or the attribute's name, all from this
%% kind's code, so a handful per process.
pattern(Key) ->
    case get({?MODULE, Key}) of
        undefined ->
            P = binary:compile_pattern(case Key of
                                           {attr, N} -> [<<" ", N/binary, "='">>,
                                                         <<" ", N/binary, "=\"">>];
                                           Bin -> Bin
                                       end),
            put({?MODULE, Key}, P),
            P;
        P -> P
    end.

%% @doc Whether a stanza holds `Text' (a namespace, a child's name).
-spec has(binary(), binary()) -> boolean().
has(S, Text) -> binary:match(S, Text) =/= nomatch.

%% @doc The text of its reasons.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_big, Max}) ->
    io_lib:format("XMPP stanza above max_reply_bytes (~b): connection closed", [Max]);
format_error(too_deep) ->
    io_lib:format("XMPP stanza nested deeper than ~b elements: connection closed", [?MAX_DEPTH]);
format_error(not_xmpp) -> "bad XMPP stream (not a stanza): connection closed".
