'use strict';
// Catalog editor (/catalog?stream=ID): the stream's catalog (schema
// livehat.catalog/2) edited in the page. Every change is checked as it is
// typed (POST …/catalog/check) and the cells at fault are marked; Save
// sends the whole catalog with the catalog revision it was loaded at. A
// save that meets someone else's change (409 catalog_conflict) keeps what
// the merchant typed and offers to merge it into the current catalog or to
// take the current one. The draft is also kept in localStorage until it is
// saved, so a closed tab or a failed save loses nothing.
LH.i18n.add({
  en: {
    'catalog.title': 'LiveHAT · Catalog', 'catalog.heading': 'Catalog',
    'catalog.heading_of': 'Catalog · {name}', 'catalog.no_stream': 'Open the catalog from a stream: /catalog?stream=ID.',
    'catalog.save': 'Save', 'catalog.reload': 'Reload', 'catalog.export_csv': 'Export CSV', 'catalog.export_json': 'Export JSON',
    'catalog.status_saved': 'Revision {rev} · saved', 'catalog.status_unsaved': 'Revision {rev} · unsaved changes',
    'catalog.status_checking': 'checking…', 'catalog.status_problems': '{n} problem(s)', 'catalog.status_ok': 'no problems',
    'catalog.saved': 'Catalog saved (revision {rev})', 'catalog.not_saved_problems': 'Not saved: fix the marked fields first',
    'catalog.leave_unsaved': 'The catalog has unsaved changes.',
    'catalog.conflict': 'Someone else saved the catalog (now revision {rev}) after you opened it. Your edits are still here, not saved.',
    'catalog.conflict_merge': 'Merge my edits into theirs', 'catalog.conflict_theirs': 'Discard mine and load theirs',
    'catalog.merged': 'Merged: your edits are on top of revision {rev}. Check and save.',
    'catalog.restore': 'Unsaved edits of this catalog from {when} were kept in this browser.',
    'catalog.restore_yes': 'Restore them', 'catalog.restore_no': 'Discard them',
    'catalog.problems': 'Problems', 'catalog.where_file': 'Catalog',
    'catalog.where_products': 'Product {n} ({name})', 'catalog.where_coupons': 'Coupon {n} ({name})',
    'catalog.where_promotions': 'Promotion {n} ({name})',
    'catalog.products': 'Products', 'catalog.add_product': 'Add product', 'catalog.details': 'Details', 'catalog.delete': 'Delete',
    'catalog.empty_products': 'No products yet. Add one, or import a file below.',
    'catalog.col.link': 'Link', 'catalog.col.id': 'ID', 'catalog.col.name': 'Name', 'catalog.col.price': 'Price',
    'catalog.col.list_price': 'List price', 'catalog.col.stock': 'Stock', 'catalog.col.stock_state': 'Stock state',
    'catalog.col.category': 'Category', 'catalog.col.actions': '',
    'catalog.link_n': 'No. {n}', 'catalog.no_link': '—',
    'catalog.not_stated': 'not stated',
    'catalog.state.in_stock': 'in stock', 'catalog.state.low': 'low', 'catalog.state.sold_out': 'sold out', 'catalog.state.presale': 'presale',
    'catalog.details_of': 'Details · {name}', 'catalog.pick_product': 'Pick a product\u2019s Details to edit its variants, size chart, specs, food facts, shipping and returns.',
    'catalog.basics': 'More about the product', 'catalog.aliases': 'Other names (comma separated)', 'catalog.description': 'Description',
    'catalog.restock_date': 'Restock date', 'catalog.presale_ship_date': 'Presale ships on', 'catalog.limit_per_buyer': 'Limit per buyer',
    'catalog.variants': 'Variants', 'catalog.add_variant': 'Add variant',
    'catalog.variants_hint': 'One row per choice; give each kind of choice its axis (colour, size). Price and stock only where the variant has its own.',
    'catalog.axis': 'Axis', 'catalog.variant_name': 'Choice',
    'catalog.size_chart': 'Size chart', 'catalog.add_size': 'Add size', 'catalog.size': 'Size',
    'catalog.min_height': 'Min height (cm)', 'catalog.max_height': 'Max height (cm)', 'catalog.min_weight': 'Min weight (kg)', 'catalog.max_weight': 'Max weight (kg)',
    'catalog.food': 'Ingredients, allergens and shelf life', 'catalog.ingredients': 'Ingredients (comma separated)',
    'catalog.allergens': 'Allergens (comma separated: peanut, milk, …)', 'catalog.no_allergens': 'States it contains no allergens',
    'catalog.shelf_life_days': 'Shelf life (days)', 'catalog.best_before': 'Best before', 'catalog.certifications': 'Certifications (comma separated)',
    'catalog.specs': 'Specs', 'catalog.add_spec': 'Add spec',
    'catalog.specs_hint': 'Facts viewers ask about (battery life, material, waterproof): a key, its names for viewers, and a number with its unit, a text with its Chinese form, or a yes/no.',
    'catalog.spec_key': 'Key', 'catalog.spec_label': 'Name (English)', 'catalog.spec_label_zh': 'Name (Chinese)', 'catalog.spec_type': 'Type',
    'catalog.spec_value': 'Value', 'catalog.spec_unit': 'Unit', 'catalog.spec_value_zh': 'Value (Chinese)',
    'catalog.spec_type.number': 'number', 'catalog.spec_type.text': 'text', 'catalog.spec_type.bool': 'yes/no',
    'catalog.shipping': 'Shipping', 'catalog.ship_from': 'Ships from', 'catalog.dispatch_hours': 'Dispatch within (hours)',
    'catalog.fee': 'Shipping fee (0 = free)', 'catalog.carrier': 'Carrier', 'catalog.excluded_regions': 'Does not ship to (comma separated)',
    'catalog.returns': 'Returns', 'catalog.returns_accepted': 'Returns accepted', 'catalog.yes': 'yes', 'catalog.no': 'no',
    'catalog.return_days': 'Return window (days)', 'catalog.no_reason': 'No-reason returns', 'catalog.insured': 'Return shipping insured',
    'catalog.return_conditions': 'Conditions (comma separated)',
    'catalog.cart': 'Live cart link order', 'catalog.cart_hint': 'Viewers quote these numbers (“No. 3”). Drag a row, or use the arrows.',
    'catalog.move_up': 'Move {name} up', 'catalog.move_down': 'Move {name} down', 'catalog.remove_from_cart': 'Take out of the cart',
    'catalog.add_to_cart': 'Put in the cart', 'catalog.not_in_cart': 'Not in the cart',
    'catalog.coupons': 'Coupons', 'catalog.add_coupon': 'Add coupon', 'catalog.coupon_kind': 'Discount',
    'catalog.amount_off': 'amount off', 'catalog.percent_off': 'percent off', 'catalog.value': 'Value',
    'catalog.min_spend': 'Min spend', 'catalog.applies_to': 'Products (none: all)', 'catalog.new_viewers_only': 'New viewers only',
    'catalog.remaining': 'Remaining', 'catalog.per_buyer': 'Per buyer', 'catalog.starts': 'Starts', 'catalog.ends': 'Ends',
    'catalog.promotions': 'Promotions', 'catalog.add_promotion': 'Add promotion', 'catalog.promo_title': 'Title', 'catalog.kind': 'Kind',
    'catalog.kind.price': 'special price', 'catalog.kind.percent': 'percent off', 'catalog.kind.multi_buy': 'multi-buy',
    'catalog.kind.bundle': 'bundle', 'catalog.kind.gift': 'gift',
    'catalog.promo_products': 'Products', 'catalog.terms': 'Terms', 'catalog.promo_price': 'Price', 'catalog.promo_percent': 'Percent off',
    'catalog.quantity': 'Quantity', 'catalog.nth_percent': 'Percent off the last item', 'catalog.gift': 'Gift', 'catalog.text': 'Your wording',
    'catalog.import': 'Import a file', 'catalog.import_hint': 'A CSV replaces the products and keeps the coupons and promotions; a JSON file replaces the whole catalog. The file is checked first and nothing is stored until you save.',
    'catalog.import_check': 'Check file', 'catalog.import_pick': 'Choose a .csv or .json file first',
    'catalog.import_problems': 'The file has {n} problem(s); nothing was read into the editor:',
    'catalog.import_ok': 'The file reads: {products} products, {coupons} coupons, {promotions} promotions.',
    'catalog.import_load': 'Load into the editor', 'catalog.import_loaded': 'Loaded into the editor: review, then save.',
    'catalog.import_warning': 'Note: {text}',
    'catalog.col.section': 'Section', 'catalog.col.row': 'Row', 'catalog.col.column': 'Column', 'catalog.col.message': 'Problem',
    'catalog.section.file': 'file', 'catalog.section.products': 'products', 'catalog.section.coupons': 'coupons', 'catalog.section.promotions': 'promotions',
  },
  'zh-CN': {
    'catalog.title': 'LiveHAT · 商品库', 'catalog.heading': '商品库',
    'catalog.heading_of': '商品库 · {name}', 'catalog.no_stream': '请从直播间打开商品库：/catalog?stream=ID。',
    'catalog.save': '保存', 'catalog.reload': '重新加载', 'catalog.export_csv': '导出 CSV', 'catalog.export_json': '导出 JSON',
    'catalog.status_saved': '版本 {rev} · 已保存', 'catalog.status_unsaved': '版本 {rev} · 有未保存的修改',
    'catalog.status_checking': '检查中…', 'catalog.status_problems': '{n} 个问题', 'catalog.status_ok': '没有问题',
    'catalog.saved': '商品库已保存（版本 {rev}）', 'catalog.not_saved_problems': '未保存：请先修正标红的字段',
    'catalog.leave_unsaved': '商品库有未保存的修改。',
    'catalog.conflict': '您打开之后，他人保存了商品库（现为版本 {rev}）。您的修改仍在页面上，尚未保存。',
    'catalog.conflict_merge': '把我的修改合并到对方版本', 'catalog.conflict_theirs': '放弃我的修改，加载对方版本',
    'catalog.merged': '已合并：您的修改已放在版本 {rev} 之上。请检查后保存。',
    'catalog.restore': '本浏览器保留了 {when} 未保存的商品库修改。',
    'catalog.restore_yes': '恢复', 'catalog.restore_no': '丢弃',
    'catalog.problems': '问题', 'catalog.where_file': '商品库',
    'catalog.where_products': '第 {n} 个商品（{name}）', 'catalog.where_coupons': '第 {n} 张优惠券（{name}）',
    'catalog.where_promotions': '第 {n} 个活动（{name}）',
    'catalog.products': '商品', 'catalog.add_product': '添加商品', 'catalog.details': '详情', 'catalog.delete': '删除',
    'catalog.empty_products': '还没有商品。请添加，或在下方导入文件。',
    'catalog.col.link': '链接', 'catalog.col.id': '商品ID', 'catalog.col.name': '名称', 'catalog.col.price': '直播价',
    'catalog.col.list_price': '划线价', 'catalog.col.stock': '库存', 'catalog.col.stock_state': '库存状态',
    'catalog.col.category': '类目', 'catalog.col.actions': '',
    'catalog.link_n': '{n}号', 'catalog.no_link': '—',
    'catalog.not_stated': '未说明',
    'catalog.state.in_stock': '有货', 'catalog.state.low': '库存紧张', 'catalog.state.sold_out': '售罄', 'catalog.state.presale': '预售',
    'catalog.details_of': '详情 · {name}', 'catalog.pick_product': '点击商品的“详情”来编辑规格、尺码表、参数、配料、发货和退货。',
    'catalog.basics': '商品补充信息', 'catalog.aliases': '别名（逗号分隔）', 'catalog.description': '描述',
    'catalog.restock_date': '补货日期', 'catalog.presale_ship_date': '预售发货日期', 'catalog.limit_per_buyer': '每人限购',
    'catalog.variants': '规格', 'catalog.add_variant': '添加规格',
    'catalog.variants_hint': '每个选项一行；同类选项填同一维度（颜色、尺码）。只有该规格有自己的价格或库存时才填写。',
    'catalog.axis': '维度', 'catalog.variant_name': '选项',
    'catalog.size_chart': '尺码表', 'catalog.add_size': '添加尺码', 'catalog.size': '尺码',
    'catalog.min_height': '最低身高（cm）', 'catalog.max_height': '最高身高（cm）', 'catalog.min_weight': '最低体重（kg）', 'catalog.max_weight': '最高体重（kg）',
    'catalog.food': '配料、过敏原和保质期', 'catalog.ingredients': '配料（逗号分隔）',
    'catalog.allergens': '过敏原（逗号分隔：peanut、milk…）', 'catalog.no_allergens': '声明不含过敏原',
    'catalog.shelf_life_days': '保质期（天）', 'catalog.best_before': '有效期至', 'catalog.certifications': '认证（逗号分隔）',
    'catalog.specs': '商品参数', 'catalog.add_spec': '添加参数',
    'catalog.specs_hint': '观众常问的参数（续航、材质、是否防水）：参数键、给观众看的名称，以及带单位的数字、带中文写法的文本或是/否。',
    'catalog.spec_key': '参数键', 'catalog.spec_label': '名称（英文）', 'catalog.spec_label_zh': '名称（中文）', 'catalog.spec_type': '类型',
    'catalog.spec_value': '值', 'catalog.spec_unit': '单位', 'catalog.spec_value_zh': '值（中文）',
    'catalog.spec_type.number': '数字', 'catalog.spec_type.text': '文本', 'catalog.spec_type.bool': '是/否',
    'catalog.shipping': '发货', 'catalog.ship_from': '发货地', 'catalog.dispatch_hours': '发货时效（小时）',
    'catalog.fee': '运费（0 为包邮）', 'catalog.carrier': '快递', 'catalog.excluded_regions': '不发货地区（逗号分隔）',
    'catalog.returns': '退货', 'catalog.returns_accepted': '支持退货', 'catalog.yes': '是', 'catalog.no': '否',
    'catalog.return_days': '退货期限（天）', 'catalog.no_reason': '七天无理由', 'catalog.insured': '运费险',
    'catalog.return_conditions': '退货条件（逗号分隔）',
    'catalog.cart': '直播购物车链接顺序', 'catalog.cart_hint': '观众会报这些号码（“3号链接”）。拖动一行，或用箭头按钮调整。',
    'catalog.move_up': '上移 {name}', 'catalog.move_down': '下移 {name}', 'catalog.remove_from_cart': '移出购物车',
    'catalog.add_to_cart': '加入购物车', 'catalog.not_in_cart': '不在购物车',
    'catalog.coupons': '优惠券', 'catalog.add_coupon': '添加优惠券', 'catalog.coupon_kind': '优惠方式',
    'catalog.amount_off': '立减金额', 'catalog.percent_off': '折扣（% off）', 'catalog.value': '数值',
    'catalog.min_spend': '最低消费', 'catalog.applies_to': '适用商品（不选：全部）', 'catalog.new_viewers_only': '仅限新人',
    'catalog.remaining': '剩余张数', 'catalog.per_buyer': '每人限领', 'catalog.starts': '开始', 'catalog.ends': '结束',
    'catalog.promotions': '促销活动', 'catalog.add_promotion': '添加活动', 'catalog.promo_title': '标题', 'catalog.kind': '类型',
    'catalog.kind.price': '特价', 'catalog.kind.percent': '折扣', 'catalog.kind.multi_buy': '多件优惠',
    'catalog.kind.bundle': '组合套装', 'catalog.kind.gift': '赠品',
    'catalog.promo_products': '商品', 'catalog.terms': '条件', 'catalog.promo_price': '价格', 'catalog.promo_percent': '折扣（% off）',
    'catalog.quantity': '件数', 'catalog.nth_percent': '最后一件的折扣（% off）', 'catalog.gift': '赠品', 'catalog.text': '自定义文案',
    'catalog.import': '导入文件', 'catalog.import_hint': 'CSV 替换商品并保留优惠券和活动；JSON 替换整个商品库。文件会先检查，保存之前不会存储任何内容。',
    'catalog.import_check': '检查文件', 'catalog.import_pick': '请先选择 .csv 或 .json 文件',
    'catalog.import_problems': '文件有 {n} 个问题，未读入编辑器：',
    'catalog.import_ok': '文件可读：{products} 个商品，{coupons} 张优惠券，{promotions} 个活动。',
    'catalog.import_load': '读入编辑器', 'catalog.import_loaded': '已读入编辑器：请检查后保存。',
    'catalog.import_warning': '提示：{text}',
    'catalog.col.section': '部分', 'catalog.col.row': '行', 'catalog.col.column': '列', 'catalog.col.message': '问题',
    'catalog.section.file': '文件', 'catalog.section.products': '商品', 'catalog.section.coupons': '优惠券', 'catalog.section.promotions': '促销活动',
    // The catalog check's problems by code (harness/catalog/README.md),
    // with their params as {0}, {1}; problemText.
    'catalog.msg.required': '缺少必填字段“{0}”', 'catalog.msg.empty': '不能为空', 'catalog.msg.empty_list': '不能为空，至少需要一项',
    'catalog.msg.negative': '{0} 不能为负数', 'catalog.msg.at_least': '{0} 小于最小值 {1}', 'catalog.msg.at_most': '{0} 超过最大值 {1}',
    'catalog.msg.above': '{0} 必须大于 {1}', 'catalog.msg.below': '{0} 必须小于 {1}',
    'catalog.msg.want': '类型不对：应为{1}（现为{0}）',
    'catalog.msg.not_number': '“{0}”不是数字',
    // The CSV reader's own problems (console/catalog_csv.go, csv_… codes).
    'catalog.msg.csv_not_utf8': '文件不是 UTF-8 文本：请另存为“CSV UTF-8”', 'catalog.msg.csv_empty': '文件是空的',
    'catalog.msg.csv_unreadable': '无法读取：{0}', 'catalog.msg.csv_empty_column': '表头第 {0} 列没有列名',
    'catalog.msg.csv_unknown_column': '未知列“{0}”', 'catalog.msg.csv_unknown_column_hint': '未知列“{0}”；您是不是想写“{1}”？',
    'catalog.msg.csv_column_twice': '列“{0}”出现了两次', 'catalog.msg.csv_missing_column': '表头缺少“{0}”列',
    'catalog.msg.csv_both_columns': '请只填写 {0} 或旧的 {1}，不要两个都填',
    'catalog.msg.csv_too_many_fields': '这一行有 {0} 个字段，但表头只有 {1} 列', 'catalog.msg.csv_too_many_products': '商品超过 {0} 个',
    'catalog.msg.csv_no_rows': '文件只有表头，没有商品行', 'catalog.msg.csv_not_whole': '“{0}”不是整数',
    'catalog.msg.csv_not_positive': '“{0}”：请写 1 或以上；未标明时留空', 'catalog.msg.csv_bad_money': '“{0}”不是有效金额',
    'catalog.msg.csv_bad_date': '“{0}”不是有效日期，请写成 2026-12-01 这样', 'catalog.msg.csv_bad_stock_state': '“{0}”不是库存状态（有货、少量、售罄或预售）',
    'catalog.msg.csv_bad_attribute': '“{0}”不是“键=值”的写法', 'catalog.msg.csv_bad_spec': '参数“{0}”读不出来',
    'catalog.msg.csv_bad_size_row': '尺码表行“{0}”读不出来', 'catalog.msg.csv_variant_fields': '“{0}”超过了 名称:库存:价格:状态:补货日期 五项',
    'catalog.msg.csv_variant_stock': '“{0}”：库存“{1}”不是整数', 'catalog.msg.csv_variant_price': '“{0}”：价格“{1}”不是有效金额',
    'catalog.msg.csv_negative': '{0} 不能为负数', 'catalog.msg.csv_conditions_without_returns': '填写了退货条件，但退货一栏没有说明是否支持退货',
    'catalog.msg.csv_bad_returns_word': '“{0}”不是退货的写法（不退、可退、天数、无理由、运费险）',
    'catalog.msg.csv_returns_unsaid': '请说明是否支持退货：不退、可退或天数',
    'catalog.msg.catalog_unreadable': '商品库读不出来：{0}', 'catalog.msg.more_problems': '还有 {0} 个问题',
    'catalog.msg.link_taken': '链接 {0} 已被第 {1} 行的商品使用', 'catalog.msg.id_taken': 'ID“{0}”已被使用',
    'catalog.msg.list_price_below': '划线价 {0} 低于直播价 {1}', 'catalog.msg.variants_sum': '库存为 {0}，但规格库存合计为 {1}',
    'catalog.msg.variants_over': '库存为 {0}，但已标明库存的规格合计已达 {1}',
    'catalog.msg.unknown_field_hint': '未知字段“{0}”；您是不是想写“{1}”？', 'catalog.msg.unknown_field_renamed': '未知字段“{0}”；第 2 版中叫“{1}”',
    'catalog.msg.unknown_field_plain': '未知字段“{0}”', 'catalog.msg.not_one_of': '{0} 不是可选值（{1}）之一',
    'catalog.msg.not_one_of_hint': '{0} 不是可选值（{1}）之一；您是不是想写“{2}”？',
    'catalog.msg.bad_time': '“{0}”不是有效时间，请写成 2026-12-01T20:00:00+08:00 这样', 'catalog.msg.bad_format': '“{0}”不是有效的 {1}',
    'catalog.msg.bad_id': '“{0}”不是有效的 ID：请用 1–64 个字母、数字或 . _ -', 'catalog.msg.bad_currency': '“{0}”不是币种代码：请用三个大写字母，如 CNY',
    'catalog.msg.bad_pattern': '“{0}”格式不对', 'catalog.msg.too_short': '只有 {0} 个字符，至少需要 {1} 个', 'catalog.msg.too_few': '只有 {0} 项，至少需要 {1} 项',
    'catalog.msg.duplicate_item': '与第 {0} 项重复', 'catalog.msg.duplicate_field': '字段“{0}”在同一处出现了两次，请只保留一个',
    'catalog.msg.too_large': '{0} 太大', 'catalog.msg.too_small': '{0} 太小', 'catalog.msg.want_whole_literal': '{0}：请写整数，不要小数点或指数',
    'catalog.msg.want_value': '{0} 不对：应为 {1}', 'catalog.msg.presale_date_not_presale': '填写了预售发货日期，但库存状态不是“预售”',
    'catalog.msg.returns_not_accepted': '已填写，但此商品不支持退货', 'catalog.msg.sold_out_with_stock': '库存状态为“售罄”，但库存为 {0}',
    'catalog.msg.variant_stock_sold_out': '规格库存为 {0}，但商品的库存状态为“售罄”', 'catalog.msg.variant_repeats': '规格“{0}”与第 {1} 个规格重复',
    'catalog.msg.spec_key_taken': '参数键“{0}”已被第 {1} 个参数使用', 'catalog.msg.size_taken': '尺码“{0}”已在尺码表第 {1} 行',
    'catalog.msg.unit_needs_number': '单位“{0}”只能用于数字值', 'catalog.msg.value_zh_needs_text': '中文写法只能用于文本值',
    'catalog.msg.kind_one_of': '此类型只能填写 {1} 之一，不能同时填写 {2}', 'catalog.msg.invalid_json': '不是有效的 JSON：{0}',
    'catalog.msg.empty_document': '文件是空的', 'catalog.msg.not_object': '商品库必须是 JSON 对象', 'catalog.msg.schema_type': 'schema 必须是文本“{1}”',
    'catalog.msg.schema_version': '不认识的版本“{0}”：支持“{1}”，并可升级“{2}”',
    'catalog.msg.v1_attribute_unnamed': '有一个没有名称的属性；第 2 版的参数键不能为空',
    'catalog.msg.v1_promotion_both': '第 1 版的促销同时有价格和折扣，无法升级：第 2 版每个促销只有一种类型',
    'catalog.msg.v1_promotion_kind': '第 1 版的促销需要价格或折扣才能升级', 'catalog.msg.v1_promotion_products': '没有适用商品；第 2 版需要写明促销适用的商品',
    'catalog.msg.unknown_product': '商品库中没有商品“{0}”', 'catalog.msg.unknown_product_hint': '商品库中没有商品“{0}”；您是不是想写“{1}”？',
    'catalog.msg.coupon_needs': '需要填写立减金额或折扣', 'catalog.msg.coupon_both': '优惠券只能填写立减金额或折扣之一',
    'catalog.msg.no_bound': '至少填写一个身高或体重范围', 'catalog.msg.height_order': '最低身高 {0} 高于最高身高 {1}',
    'catalog.msg.weight_order': '最低体重 {0} 高于最高体重 {1}', 'catalog.msg.kind_needs': '此类型需要填写 {1}',
    'catalog.msg.kind_needs_one': '此类型需要填写以下之一：{1}', 'catalog.msg.kind_takes': '与活动类型不符（此类型只接受 {1}）',
    'catalog.msg.bundle': '组合套装至少需要两个商品，现为 {0} 个', 'catalog.msg.state_stock0': '库存为 0，但库存状态为“{0}”',
    'catalog.msg.not_before': '开始时间必须早于结束时间',
    'catalog.msg.bad_date': '日期“{0}”不是有效的 YYYY-MM-DD 日期', 'catalog.msg.place': '（第 {0} 行，第 {1} 列）',
  },
});

LiveHAT.page(async () => {
  const {el, api, toast, showError} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const streamId = new URLSearchParams(location.search).get('stream');
  if (!streamId) { main.append(el('p', {class: 'error'}, t('catalog.no_stream'))); return; }
  const base = '/api/streams/' + encodeURIComponent(streamId) + '/catalog';
  const draftKey = 'livehat.catalog.draft.' + streamId;
  const SECTIONS = ['products', 'coupons', 'promotions'];
  const STATES = ['in_stock', 'low', 'sold_out', 'presale'];
  const KINDS = ['price', 'percent', 'multi_buy', 'bundle', 'gift'];
  // KIND_FIELDS are the terms each promotion kind takes (the schema's table).
  const KIND_FIELDS = {price: ['price', 'min_spend'], percent: ['percent', 'min_spend'],
    multi_buy: ['quantity', 'price', 'percent', 'nth_percent'], bundle: ['price'], gift: ['gift', 'min_spend']};

  const stream = await api('GET', '/api/streams/' + encodeURIComponent(streamId));
  const state = {
    revision: 0, cat: null, selected: -1, dirty: false, problems: [], conflict: null, checking: false,
    // touched holds the entries the merchant changed or added, deleted the
    // ids they removed: a merge lays these over the other editor's catalog.
    touched: new Set(), deleted: {products: new Set(), coupons: new Set(), promotions: new Set()},
  };

  const status = el('span', {id: 'catalog-status', class: 'muted'});
  const notices = el('div', {id: 'catalog-notices'});
  const problemBox = el('div', {id: 'catalog-problems'});
  const cards = {products: el('div', {class: 'card', id: 'catalog-products'}), details: el('div', {class: 'card', id: 'catalog-details'}),
    cart: el('div', {class: 'card', id: 'catalog-cart'}), coupons: el('div', {class: 'card', id: 'catalog-coupons'}),
    promotions: el('div', {class: 'card', id: 'catalog-promotions'}), import: el('div', {class: 'card', id: 'catalog-import'})};
  const exportJSON = el('button', {type: 'button', class: 'secondary', id: 'catalog-export-json', onclick: downloadJSON}, t('catalog.export_json'));
  main.replaceChildren(
    el('div', {class: 'row'}, el('h1', {}, t('catalog.heading_of', {name: stream.name})), el('span', {class: 'spacer'}),
      status,
      el('button', {type: 'button', id: 'catalog-save', onclick: save}, t('catalog.save')),
      el('button', {type: 'button', class: 'secondary', id: 'catalog-reload', onclick: () => reload(true)}, t('catalog.reload')),
      el('a', {href: base + '?format=csv', download: 'catalog.csv', id: 'catalog-export-csv'}, t('catalog.export_csv')),
      exportJSON),
    notices, problemBox, cards.products, cards.details, cards.cart, cards.coupons, cards.promotions, cards.import);

  window.addEventListener('beforeunload', (e) => { if (state.dirty) { e.preventDefault(); e.returnValue = t('catalog.leave_unsaved'); } });

  // ---- loading, saving, conflicts ----

  async function reload(announce) {
    const r = await api('GET', base);
    state.revision = r.catalog_revision;
    state.cat = normalize(r.catalog);
    state.touched = new Set();
    for (const s of SECTIONS) state.deleted[s] = new Set();
    state.conflict = null;
    state.problems = [];
    setDirty(false);
    if (state.selected >= state.cat.products.length) state.selected = -1;
    renderAll();
    if (announce) toast(t('catalog.status_saved', {rev: state.revision}));
  }

  function normalize(cat) {
    const c = cat || {};
    c.schema = 'livehat.catalog/2';
    if (!c.currency) c.currency = stream.currency || 'CNY';
    c.products = c.products || [];
    return c;
  }

  async function save() {
    clearTimeout(checkTimer);
    const own = specProblems();
    if (own.length) {
      state.problems = own;
      markProblems();
      toast(t('catalog.not_saved_problems'), 'error');
      return;
    }
    try {
      const r = await api('PUT', base, {catalog_revision: state.revision, catalog: state.cat});
      state.revision = r.catalog_revision;
      state.cat = normalize(r.catalog);
      state.touched = new Set();
      for (const s of SECTIONS) state.deleted[s] = new Set();
      state.conflict = null;
      state.problems = [];
      setDirty(false);
      renderAll();
      toast(t('catalog.saved', {rev: state.revision}));
    } catch (err) {
      // The draft stays as typed whatever went wrong.
      if (err.code === 'catalog_conflict' && err.body) {
        state.conflict = {revision: err.body.catalog_revision, catalog: err.body.catalog};
        renderNotices();
      } else if (err.code === 'catalog_invalid' && err.body) {
        state.problems = err.body.problems || [];
        markProblems();
        toast(t('catalog.not_saved_problems'), 'error');
      } else {
        showError(err);
      }
    }
  }

  // merge lays the merchant's own changes over the catalog another editor
  // saved: their entries stay unless this merchant changed (same id) or
  // deleted them; entries this merchant added are appended.
  function merge(theirs) {
    const out = normalize(structuredClone(theirs));
    for (const s of SECTIONS) {
      const list = (out[s] || []).filter((x) => !state.deleted[s].has(x.id));
      for (const mine of state.cat[s] || []) {
        if (!state.touched.has(mine)) continue;
        const i = list.findIndex((x) => x.id === mine.id);
        if (i >= 0) list[i] = mine; else list.push(mine);
      }
      if (list.length || s === 'products') out[s] = list; else delete out[s];
    }
    return out;
  }

  function takeConflict(how) {
    const c = state.conflict;
    if (how === 'merge') {
      state.cat = merge(c.catalog);
      state.revision = c.revision;
      state.conflict = null;
      setDirty(true);
      renderAll();
      toast(t('catalog.merged', {rev: c.revision}));
    } else {
      state.cat = normalize(c.catalog);
      state.revision = c.revision;
      state.touched = new Set();
      for (const s of SECTIONS) state.deleted[s] = new Set();
      state.conflict = null;
      setDirty(false);
      renderAll();
    }
  }

  // ---- the draft in localStorage ----

  function storeDraft() {
    try {
      localStorage.setItem(draftKey, JSON.stringify({revision: state.revision, at: new Date().toISOString(), catalog: state.cat}));
    } catch { /* storage full or disabled: the draft lives in the page only */ }
  }

  function storedDraft() {
    try { return JSON.parse(localStorage.getItem(draftKey) || 'null'); } catch { return null; }
  }

  function dropDraft() { try { localStorage.removeItem(draftKey); } catch { /* nothing kept */ } }

  function setDirty(d) {
    state.dirty = d;
    if (d) storeDraft(); else dropDraft();
    renderStatus();
  }

  // ---- checking as the merchant types ----

  let checkTimer = 0;
  let checkSeq = 0;
  function changed(entry) {
    if (entry) state.touched.add(entry);
    setDirty(true);
    clearTimeout(checkTimer);
    checkTimer = setTimeout(check, 300);
  }

  async function check() {
    const seq = ++checkSeq;
    state.checking = true;
    renderStatus();
    try {
      const r = await api('POST', base + '/check', state.cat);
      if (seq !== checkSeq) return; // a later check is on its way
      state.problems = [...(r.problems || []), ...specProblems()];
    } catch (err) {
      if (seq === checkSeq) showError(err);
    } finally {
      if (seq === checkSeq) { state.checking = false; markProblems(); }
    }
  }

  // CODE_TEXTS words a coded problem (harness/catalog's codes) with one of
  // the page's texts, when the code's own key is taken or its params need
  // reordering; other codes use catalog.msg.<code> as they are.
  const CODE_TEXTS = {
    want_type: (ps) => ['want', [typeWord(ps[0]), ps.slice(1).map(typeWord).join('或')]],
    unknown_field: (ps) => ['unknown_field_plain', ps],
    unknown_field_hint: (ps) => ['unknown_field_hint', ps],
    want_whole: (ps) => ['want_whole_literal', ps],
  };

  // TYPE_WORDS name JSON Schema's types.
  const TYPE_WORDS = {string: '文本', number: '数字', integer: '整数', boolean: '是/否', object: '对象', array: '列表', null: '空值'};
  function typeWord(type) { return TYPE_WORDS[type] || type; }

  // unquote drops the JSON quotes of a value the check quotes as written.
  function unquote(v) { return /^".*"$/.test(v) ? v.slice(1, -1) : v; }

  // problemText is a problem's text in the page's language: in Chinese
  // from its code and params (the place in a JSON file kept), else as the
  // server wrote it.
  function problemText(p) {
    const message = p.message || '';
    if (LH.locale() !== 'zh-CN') return message;
    const place = / \(line (\d+), column (\d+)\)$/.exec(message);
    const where = place ? t('catalog.msg.place', {0: place[1], 1: place[2]}) : '';
    const params = (p.params || []).map(unquote);
    if (p.code) {
      const [key, values] = CODE_TEXTS[p.code] ? CODE_TEXTS[p.code](params) : [p.code, params];
      if (LH.i18n.has('catalog.msg.' + key)) return t('catalog.msg.' + key, Object.fromEntries(values.map((v, i) => [String(i), v]))) + where;
      return message;
    }
    return message;
  }

  // pathOf is the data-path of the input a problem is about.
  function pathOf(p) {
    if (p.section === 'file' || !p.row) return p.column || '';
    return p.section + '[' + (p.row - 1) + ']' + (p.column ? '.' + p.column : '');
  }

  function whereOf(p) {
    if (p.section === 'file' || !p.row) return t('catalog.where_file') + (p.column ? ' · ' + p.column : '');
    const entry = (state.cat[p.section] || [])[p.row - 1] || {};
    return t('catalog.where_' + p.section, {n: p.row, name: entry.name || entry.title || entry.id || ''}) + (p.column ? ' · ' + p.column : '');
  }

  function markProblems() {
    for (const node of main.querySelectorAll('.invalid, .row-invalid')) {
      node.classList.remove('invalid', 'row-invalid');
      if (node.dataset.path) node.removeAttribute('title');
    }
    for (const p of state.problems) {
      const path = pathOf(p);
      const input = main.querySelector('[data-path="' + CSS.escape(path) + '"]');
      if (input) { input.classList.add('invalid'); input.title = problemText(p); }
      // The entry's row is marked too, for a field shown elsewhere (a
      // variant of a product whose details are closed).
      const entry = p.row ? main.querySelector('tr[data-entry="' + CSS.escape(p.section + '[' + (p.row - 1) + ']') + '"]') : null;
      if (entry) entry.classList.add('row-invalid');
    }
    problemBox.replaceChildren(...(state.problems.length ? [el('div', {class: 'card bad-box'},
      el('h2', {}, t('catalog.problems')),
      el('ul', {class: 'tight', id: 'catalog-problem-list'}, state.problems.map((p) =>
        el('li', {}, el('strong', {}, whereOf(p)), ': ', problemText(p)))))] : []));
    renderStatus();
  }

  function renderStatus() {
    const parts = [t(state.dirty ? 'catalog.status_unsaved' : 'catalog.status_saved', {rev: state.revision})];
    if (state.checking) parts.push(t('catalog.status_checking'));
    else if (state.dirty) parts.push(state.problems.length ? t('catalog.status_problems', {n: state.problems.length}) : t('catalog.status_ok'));
    status.textContent = parts.join(' · ');
  }

  // ---- inputs bound to the draft ----

  // parseNumber reads an amount or count as typed (¥ and separators
  // allowed); what is not a number is kept as typed, so that the check
  // names the field.
  function parseNumber(v) {
    const s = v.replace(/[¥￥,，\s]/g, '');
    const n = Number(s);
    return s !== '' && Number.isFinite(n) ? n : v;
  }

  function splitList(v) { return v.split(/[,，、|\n]/).map((x) => x.trim()).filter(Boolean); }

  function pad(n) { return String(n).padStart(2, '0'); }
  // RFC 3339 with the browser's offset, from a datetime-local value.
  function toRFC3339(local) {
    const d = new Date(local);
    if (Number.isNaN(d.getTime())) return local;
    const off = -d.getTimezoneOffset();
    const sign = off >= 0 ? '+' : '-';
    return local.length === 16 ? local + ':00' + sign + pad(Math.floor(Math.abs(off) / 60)) + ':' + pad(Math.abs(off) % 60) : local;
  }
  function toLocalInput(v) {
    const d = new Date(v);
    if (!v || Number.isNaN(d.getTime())) return '';
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  }

  // field is an input bound to obj[key]. kind: text (required: kept even
  // when blank, so the check names it), opt (blank is absent), number,
  // list, date, datetime, bool, select (options: [value, label]).
  function field(obj, key, path, entry, kind, opts = {}) {
    const set = (v) => {
      if (v === undefined) delete obj[key]; else obj[key] = v;
      if (opts.after) opts.after(v);
      changed(entry);
    };
    const common = {'data-path': path, 'aria-label': opts.label, placeholder: opts.placeholder, class: opts.class};
    let node;
    switch (kind) {
      case 'bool':
        node = el('input', {...common, type: 'checkbox', checked: obj[key] === true,
          onchange: (e) => set(e.target.checked ? true : undefined)});
        break;
      case 'select':
        node = el('select', {...common, onchange: (e) => set(e.target.value === '' ? undefined : e.target.value)},
          opts.options.map(([value, label]) => el('option', {value, selected: (obj[key] ?? '') === value}, label)));
        break;
      case 'list':
        node = el('input', {...common, value: (obj[key] || []).join(', '),
          oninput: (e) => set(e.target.value.trim() === '' ? undefined : splitList(e.target.value))});
        break;
      case 'number':
        node = el('input', {...common, inputmode: 'decimal', value: obj[key] ?? '',
          oninput: (e) => set(e.target.value.trim() === '' ? undefined : parseNumber(e.target.value))});
        break;
      case 'date':
        node = el('input', {...common, type: 'date', value: obj[key] || '', oninput: (e) => set(e.target.value || undefined)});
        break;
      case 'datetime':
        node = el('input', {...common, type: 'datetime-local', value: toLocalInput(obj[key]),
          oninput: (e) => set(e.target.value ? toRFC3339(e.target.value) : undefined)});
        break;
      case 'opt':
        node = el('input', {...common, value: obj[key] ?? '', oninput: (e) => set(e.target.value.trim() === '' ? undefined : e.target.value)});
        break;
      default:
        node = el('input', {...common, value: obj[key] ?? '', oninput: (e) => set(e.target.value)});
    }
    return node;
  }

  // put replaces node's children, leaving out the absent ones.
  function put(node, ...children) { node.replaceChildren(...children.filter(Boolean)); }

  function labelled(text, node) { return el('div', {class: 'field'}, el('label', {}, text), node); }

  function stateOptions() { return [['', t('catalog.not_stated')], ...STATES.map((s) => [s, t('catalog.state.' + s)])]; }

  function productOptions(selected) {
    return state.cat.products.map((p) => el('option', {value: p.id, selected: (selected || []).includes(p.id)}, (p.name || p.id) + ' · ' + p.id));
  }

  // productsPicker edits a list of product ids (a coupon's, a promotion's).
  function productsPicker(obj, path, entry, label) {
    return el('select', {multiple: true, size: Math.min(4, Math.max(2, state.cat.products.length)), 'data-path': path, 'aria-label': label,
      onchange: (e) => {
        const ids = [...e.target.selectedOptions].map((o) => o.value);
        if (ids.length) obj.products = ids; else delete obj.products;
        changed(entry);
      }}, productOptions(obj.products));
  }

  function uniqueId(prefix, list) {
    const ids = new Set(list.map((x) => x.id));
    for (let i = list.length + 1; ; i++) if (!ids.has(prefix + i)) return prefix + i;
  }

  function removeEntry(section, i) {
    const [gone] = state.cat[section].splice(i, 1);
    if (gone && gone.id) state.deleted[section].add(gone.id);
    state.touched.delete(gone);
  }

  // ---- rendering ----

  function renderAll() {
    renderNotices();
    renderProducts();
    renderDetails();
    renderCart();
    renderCoupons();
    renderPromotions();
    renderImport();
    markProblems();
  }

  function renderNotices() {
    const out = [];
    if (state.conflict) {
      out.push(el('div', {class: 'card warn-box', id: 'catalog-conflict', role: 'alert'},
        el('p', {}, t('catalog.conflict', {rev: state.conflict.revision})),
        el('div', {class: 'row'},
          el('button', {type: 'button', id: 'catalog-merge', onclick: () => takeConflict('merge')}, t('catalog.conflict_merge')),
          el('button', {type: 'button', class: 'secondary', id: 'catalog-take-theirs', onclick: () => takeConflict('theirs')}, t('catalog.conflict_theirs')))));
    }
    const kept = !state.dirty && storedDraft();
    if (kept && kept.catalog && JSON.stringify(kept.catalog) !== JSON.stringify(state.cat)) {
      out.push(el('div', {class: 'card warn-box', id: 'catalog-restore'},
        el('p', {}, t('catalog.restore', {when: LH.fmt.datetime(kept.at)})),
        el('div', {class: 'row'},
          el('button', {type: 'button', id: 'catalog-restore-yes', onclick: () => {
            // The kept edits were made on kept.revision: a save meets any
            // change since as a conflict, and every kept entry counts as
            // the merchant's own for a merge.
            state.cat = normalize(kept.catalog);
            state.revision = kept.revision;
            for (const s of SECTIONS) for (const x of state.cat[s] || []) state.touched.add(x);
            setDirty(true);
            renderAll();
            check();
          }}, t('catalog.restore_yes')),
          el('button', {type: 'button', class: 'secondary', id: 'catalog-restore-no', onclick: () => { dropDraft(); renderNotices(); }}, t('catalog.restore_no')))));
    }
    notices.replaceChildren(...out);
  }

  function renderProducts() {
    const list = state.cat.products;
    const head = ['link', 'id', 'name', 'price', 'list_price', 'stock', 'stock_state', 'category', 'actions'];
    const rows = list.map((p, i) => {
      const path = 'products[' + i + ']';
      return el('tr', {'data-entry': path, class: i === state.selected ? 'selected' : ''},
        el('td', {class: 'link-no'}, p.link ? t('catalog.link_n', {n: p.link}) : t('catalog.no_link')),
        el('td', {}, field(p, 'id', path + '.id', p, 'text', {label: t('catalog.col.id'), class: 'id-input',
          after: () => { renderCoupons(); renderPromotions(); }})),
        el('td', {}, field(p, 'name', path + '.name', p, 'text', {label: t('catalog.col.name'),
          after: () => { renderCart(); if (i === state.selected) renderDetailsTitle(); }})),
        el('td', {}, field(p, 'price', path + '.price', p, 'number', {label: t('catalog.col.price'), class: 'num'})),
        el('td', {}, field(p, 'list_price', path + '.list_price', p, 'number', {label: t('catalog.col.list_price'), class: 'num'})),
        el('td', {}, field(p, 'stock', path + '.stock', p, 'number', {label: t('catalog.col.stock'), class: 'num'})),
        el('td', {}, field(p, 'stock_state', path + '.stock_state', p, 'select', {label: t('catalog.col.stock_state'), options: stateOptions()})),
        el('td', {}, field(p, 'category', path + '.category', p, 'opt', {label: t('catalog.col.category')})),
        el('td', {class: 'actions'},
          el('button', {type: 'button', class: 'secondary', onclick: () => { state.selected = i; renderProducts(); renderDetails(); markProblems(); cards.details.scrollIntoView({block: 'nearest'}); }}, t('catalog.details')),
          el('button', {type: 'button', class: 'link', onclick: () => {
            removeEntry('products', i);
            if (state.selected === i) state.selected = -1; else if (state.selected > i) state.selected--;
            renumberLinks();
            changed();
            renderAll();
          }}, t('catalog.delete'))));
    });
    cards.products.replaceChildren(
      el('div', {class: 'row'}, el('h2', {}, t('catalog.products')), el('span', {class: 'spacer'}),
        el('button', {type: 'button', id: 'catalog-add-product', onclick: addProduct}, t('catalog.add_product'))),
      list.length ? el('div', {class: 'scroll'}, el('table', {id: 'catalog-products-table', class: 'edit-table'},
        el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, t('catalog.col.' + h))))),
        el('tbody', {}, rows))) : el('p', {class: 'muted'}, t('catalog.empty_products')));
  }

  function addProduct() {
    const p = {id: uniqueId('p-', state.cat.products), name: ''};
    // A new product goes to the end of the cart, so viewers can ask for it.
    p.link = Math.max(0, ...state.cat.products.map((x) => Number(x.link) || 0)) + 1;
    state.cat.products.push(p);
    state.selected = state.cat.products.length - 1;
    changed(p);
    renderAll();
    const inputs = cards.products.querySelectorAll('tbody tr:last-child input');
    if (inputs[1]) inputs[1].focus();
  }

  function renderDetailsTitle() {
    const h = cards.details.querySelector('h2');
    const p = state.cat.products[state.selected];
    if (h && p) h.textContent = t('catalog.details_of', {name: p.name || p.id});
  }

  function subTable(rows, cols, addLabel, addId, onAdd) {
    const add = el('button', {type: 'button', class: 'secondary', id: addId, onclick: onAdd}, addLabel);
    if (!rows.length) return [add];
    return [el('table', {class: 'edit-table'}, el('thead', {}, el('tr', {}, cols.map((c) => el('th', {}, c)))), el('tbody', {}, rows)), add];
  }

  // specKinds is the type the merchant chose for each spec (a spec's JSON
  // value carries it once valid; a number typed as "abc" must stay a
  // number spec, and be marked, not become a text).
  const specKinds = new WeakMap();
  function specKind(sp) {
    if (!specKinds.has(sp)) specKinds.set(sp, typeof sp.value === 'boolean' ? 'bool' : typeof sp.value === 'number' ? 'number' : 'text');
    return specKinds.get(sp);
  }

  // specRow edits one spec: key, labels, and a value of the chosen type
  // with its unit (numbers) or Chinese form (texts).
  function specRow(p, specs, spPath, sp, j) {
    const kind = specKind(sp);
    let value;
    switch (kind) {
      case 'bool':
        value = el('select', {'data-path': spPath + '.value', 'aria-label': t('catalog.spec_value'), onchange: (e) => { sp.value = e.target.value === 'yes'; changed(p); }},
          [['yes', t('catalog.yes')], ['no', t('catalog.no')]].map(([v, l]) => el('option', {value: v, selected: (sp.value === false ? 'no' : 'yes') === v}, l)));
        break;
      case 'number':
        // What is not a number is kept as typed and marked (specProblems).
        value = el('input', {'data-path': spPath + '.value', 'aria-label': t('catalog.spec_value'), class: 'num', inputmode: 'decimal', value: sp.value ?? '',
          oninput: (e) => { sp.value = parseNumber(e.target.value); changed(p); }});
        break;
      default:
        value = field(sp, 'value', spPath + '.value', p, 'text', {label: t('catalog.spec_value')});
    }
    const type = el('select', {'data-path': spPath + '.type', 'aria-label': t('catalog.spec_type'), onchange: (e) => {
      const to = e.target.value;
      specKinds.set(sp, to);
      // The value moves to the new type where it can; a unit goes only
      // with a number and a Chinese form only with a text.
      if (to === 'bool') sp.value = sp.value !== false && sp.value !== 'no';
      else if (to === 'number') sp.value = typeof sp.value === 'number' ? sp.value : typeof sp.value === 'string' ? parseNumber(sp.value) : '';
      else sp.value = typeof sp.value === 'boolean' ? '' : String(sp.value ?? '');
      if (to !== 'number') delete sp.unit;
      if (to !== 'text') delete sp.value_zh;
      changed(p); renderDetails(); markProblems();
    }}, ['number', 'text', 'bool'].map((k) => el('option', {value: k, selected: k === kind}, t('catalog.spec_type.' + k))));
    return el('tr', {},
      el('td', {}, field(sp, 'key', spPath + '.key', p, 'text', {label: t('catalog.spec_key'), placeholder: 'battery_hours'})),
      el('td', {}, field(sp, 'label', spPath + '.label', p, 'opt', {label: t('catalog.spec_label')})),
      el('td', {}, field(sp, 'label_zh', spPath + '.label_zh', p, 'opt', {label: t('catalog.spec_label_zh')})),
      el('td', {}, type), el('td', {}, value),
      el('td', {}, kind === 'number' ? field(sp, 'unit', spPath + '.unit', p, 'opt', {label: t('catalog.spec_unit'), placeholder: 'h / ml / g'}) : null),
      el('td', {}, kind === 'text' ? field(sp, 'value_zh', spPath + '.value_zh', p, 'opt', {label: t('catalog.spec_value_zh')}) : null),
      el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => {
        specs.splice(j, 1);
        if (!specs.length) delete p.specs;
        changed(p); renderDetails(); markProblems();
      }}, t('catalog.delete'))));
  }

  // specProblems are the page's own problems: a number spec whose value
  // is not a number (the server would read it as a text).
  function specProblems() {
    const out = [];
    state.cat.products.forEach((p, i) => (p.specs || []).forEach((sp, j) => {
      if (specKind(sp) === 'number' && typeof sp.value !== 'number') {
        const typed = String(sp.value ?? '');
        out.push({section: 'products', row: i + 1, column: 'specs[' + j + '].value', code: 'not_number', params: [typed],
          message: '"' + typed + '" is not a number'});
      }
    }));
    return out;
  }

  function renderDetails() {
    const i = state.selected;
    const p = state.cat.products[i];
    if (!p) { cards.details.replaceChildren(el('p', {class: 'muted'}, t('catalog.pick_product'))); return; }
    const path = 'products[' + i + ']';
    const variants = p.variants || [];
    const vRows = variants.map((v, j) => {
      const vp = path + '.variants[' + j + ']';
      return el('tr', {},
        el('td', {}, field(v, 'axis', vp + '.axis', p, 'opt', {label: t('catalog.axis'), placeholder: 'colour / size'})),
        el('td', {}, field(v, 'name', vp + '.name', p, 'text', {label: t('catalog.variant_name')})),
        el('td', {}, field(v, 'price', vp + '.price', p, 'number', {label: t('catalog.col.price'), class: 'num'})),
        el('td', {}, field(v, 'stock', vp + '.stock', p, 'number', {label: t('catalog.col.stock'), class: 'num'})),
        el('td', {}, field(v, 'stock_state', vp + '.stock_state', p, 'select', {label: t('catalog.col.stock_state'), options: stateOptions()})),
        el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => {
          variants.splice(j, 1);
          if (!variants.length) delete p.variants;
          changed(p); renderDetails(); markProblems();
        }}, t('catalog.delete'))));
    });
    const chart = p.size_chart || [];
    const sRows = chart.map((r, j) => {
      const sp = path + '.size_chart[' + j + ']';
      return el('tr', {},
        el('td', {}, field(r, 'size', sp + '.size', p, 'text', {label: t('catalog.size')})),
        ...['min_height_cm', 'max_height_cm', 'min_weight_kg', 'max_weight_kg'].map((k, n) =>
          el('td', {}, field(r, k, sp + '.' + k, p, 'number', {class: 'num',
            label: t(['catalog.min_height', 'catalog.max_height', 'catalog.min_weight', 'catalog.max_weight'][n])}))),
        el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => {
          chart.splice(j, 1);
          if (!chart.length) delete p.size_chart;
          changed(p); renderDetails(); markProblems();
        }}, t('catalog.delete'))));
    });
    const specs = p.specs || [];
    const specRows = specs.map((sp, j) => specRow(p, specs, path + '.specs[' + j + ']', sp, j));
    const allergens = field(p, 'allergens', path + '.allergens', p, 'list', {label: t('catalog.allergens')});
    const noAllergens = el('input', {type: 'checkbox', id: 'catalog-no-allergens', checked: Array.isArray(p.allergens) && p.allergens.length === 0,
      onchange: (e) => {
        if (e.target.checked) p.allergens = []; else delete p.allergens;
        allergens.value = '';
        allergens.disabled = e.target.checked;
        changed(p);
      }});
    allergens.disabled = noAllergens.checked;
    const shipping = p.shipping || {};
    const returns = p.returns || {};
    // Shipping and returns are objects of their own: they exist in the
    // document only while one of their fields is stated.
    const holder = (key, obj) => ({
      get(k) { return obj[k]; },
      sync() { if (Object.keys(obj).length) p[key] = obj; else delete p[key]; },
    });
    const ship = holder('shipping', shipping);
    const ret = holder('returns', returns);
    const sub = (obj, h, k, kind, label) => field(obj, k, path + '.' + (h === ship ? 'shipping' : 'returns') + '.' + k, p, kind,
      {label, after: () => h.sync(), options: kind === 'select' ? [['', t('catalog.not_stated')], ['yes', t('catalog.yes')], ['no', t('catalog.no')]] : undefined});
    const accepted = el('select', {'data-path': path + '.returns.accepted', 'aria-label': t('catalog.returns_accepted'), onchange: (e) => {
      if (e.target.value === '') delete returns.accepted; else returns.accepted = e.target.value === 'yes';
      ret.sync(); changed(p);
    }}, [['', t('catalog.not_stated')], ['yes', t('catalog.yes')], ['no', t('catalog.no')]].map(([v, l]) =>
      el('option', {value: v, selected: v === (returns.accepted === undefined ? '' : returns.accepted ? 'yes' : 'no')}, l)));

    cards.details.replaceChildren(
      el('h2', {}, t('catalog.details_of', {name: p.name || p.id})),
      el('h3', {}, t('catalog.basics')),
      el('div', {class: 'form-grid'},
        labelled(t('catalog.aliases'), field(p, 'aliases', path + '.aliases', p, 'list')),
        labelled(t('catalog.description'), field(p, 'description', path + '.description', p, 'opt')),
        labelled(t('catalog.restock_date'), field(p, 'restock_date', path + '.restock_date', p, 'date')),
        labelled(t('catalog.presale_ship_date'), field(p, 'presale_ship_date', path + '.presale_ship_date', p, 'date')),
        labelled(t('catalog.limit_per_buyer'), field(p, 'limit_per_buyer', path + '.limit_per_buyer', p, 'number'))),
      el('h3', {}, t('catalog.variants')),
      el('p', {class: 'muted small'}, t('catalog.variants_hint')),
      ...subTable(vRows, [t('catalog.axis'), t('catalog.variant_name'), t('catalog.col.price'), t('catalog.col.stock'), t('catalog.col.stock_state'), ''],
        t('catalog.add_variant'), 'catalog-add-variant', () => {
          const last = variants[variants.length - 1];
          const v = {name: ''};
          if (last && last.axis) v.axis = last.axis;
          p.variants = [...variants, v];
          changed(p); renderDetails(); markProblems();
          const rows = cards.details.querySelectorAll('table')[0].querySelectorAll('tbody tr');
          rows[rows.length - 1].querySelectorAll('input')[1].focus();
        }),
      el('h3', {}, t('catalog.size_chart')),
      ...subTable(sRows, [t('catalog.size'), t('catalog.min_height'), t('catalog.max_height'), t('catalog.min_weight'), t('catalog.max_weight'), ''],
        t('catalog.add_size'), 'catalog-add-size', () => {
          p.size_chart = [...chart, {size: ''}];
          changed(p); renderDetails(); markProblems();
        }),
      el('h3', {}, t('catalog.specs')),
      el('p', {class: 'muted small'}, t('catalog.specs_hint')),
      ...subTable(specRows, [t('catalog.spec_key'), t('catalog.spec_label'), t('catalog.spec_label_zh'), t('catalog.spec_type'),
        t('catalog.spec_value'), t('catalog.spec_unit'), t('catalog.spec_value_zh'), ''],
      t('catalog.add_spec'), 'catalog-add-spec', () => {
        const sp = {key: '', value: ''};
        specKinds.set(sp, 'text');
        p.specs = [...specs, sp];
        changed(p); renderDetails(); markProblems();
        const input = cards.details.querySelector('[data-path="' + CSS.escape(path + '.specs[' + specs.length + '].key') + '"]');
        if (input) input.focus();
      }),
      el('h3', {}, t('catalog.food')),
      el('div', {class: 'form-grid'},
        labelled(t('catalog.ingredients'), field(p, 'ingredients', path + '.ingredients', p, 'list')),
        labelled(t('catalog.allergens'), allergens),
        el('div', {class: 'field'}, el('label', {class: 'check'}, noAllergens, t('catalog.no_allergens'))),
        labelled(t('catalog.shelf_life_days'), field(p, 'shelf_life_days', path + '.shelf_life_days', p, 'number')),
        labelled(t('catalog.best_before'), field(p, 'best_before', path + '.best_before', p, 'date')),
        labelled(t('catalog.certifications'), field(p, 'certifications', path + '.certifications', p, 'list'))),
      el('h3', {}, t('catalog.shipping')),
      el('div', {class: 'form-grid'},
        labelled(t('catalog.ship_from'), sub(shipping, ship, 'ship_from', 'opt')),
        labelled(t('catalog.dispatch_hours'), sub(shipping, ship, 'dispatch_hours', 'number')),
        labelled(t('catalog.fee'), sub(shipping, ship, 'fee', 'number')),
        labelled(t('catalog.carrier'), sub(shipping, ship, 'carrier', 'opt')),
        labelled(t('catalog.excluded_regions'), sub(shipping, ship, 'excluded_regions', 'list'))),
      el('h3', {}, t('catalog.returns')),
      el('div', {class: 'form-grid'},
        labelled(t('catalog.returns_accepted'), accepted),
        labelled(t('catalog.return_days'), sub(returns, ret, 'days', 'number')),
        el('div', {class: 'field'}, el('label', {class: 'check'}, sub(returns, ret, 'no_reason', 'bool', t('catalog.no_reason')), t('catalog.no_reason'))),
        el('div', {class: 'field'}, el('label', {class: 'check'}, sub(returns, ret, 'shipping_insurance', 'bool', t('catalog.insured')), t('catalog.insured'))),
        labelled(t('catalog.return_conditions'), sub(returns, ret, 'conditions', 'list'))));
  }

  // ---- the live cart's link order ----

  function cartOrder() {
    return state.cat.products.filter((p) => Number.isInteger(p.link)).sort((a, b) => a.link - b.link);
  }

  // renumberLinks numbers the cart 1, 2, 3… in its order, so that the
  // numbers viewers quote have no gaps.
  function renumberLinks(order) {
    (order || cartOrder()).forEach((p, i) => { if (p.link !== i + 1) { p.link = i + 1; state.touched.add(p); } });
  }

  function moveInCart(from, to) {
    const order = cartOrder();
    if (to < 0 || to >= order.length || from === to) return;
    const [p] = order.splice(from, 1);
    order.splice(to, 0, p);
    renumberLinks(order);
    for (const x of order) state.touched.add(x);
    changed();
    renderCart();
    renderProducts();
    markProblems();
  }

  function renderCart() {
    const order = cartOrder();
    const out = state.cat.products.filter((p) => !Number.isInteger(p.link));
    let dragFrom = -1;
    const items = order.map((p, i) => {
      const up = el('button', {type: 'button', class: 'secondary small', 'aria-label': t('catalog.move_up', {name: p.name || p.id}),
        disabled: i === 0, 'data-move': 'up', onclick: () => { moveInCart(i, i - 1); focusMove(i - 1, 'up'); }}, '↑');
      const down = el('button', {type: 'button', class: 'secondary small', 'aria-label': t('catalog.move_down', {name: p.name || p.id}),
        disabled: i === order.length - 1, 'data-move': 'down', onclick: () => { moveInCart(i, i + 1); focusMove(i + 1, 'down'); }}, '↓');
      return el('li', {draggable: true, class: 'cart-item', 'data-id': p.id,
        ondragstart: (e) => { dragFrom = i; e.dataTransfer.effectAllowed = 'move'; e.dataTransfer.setData('text/plain', p.id); e.currentTarget.classList.add('dragging'); },
        ondragend: (e) => e.currentTarget.classList.remove('dragging'),
        ondragover: (e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'move'; },
        ondrop: (e) => {
          e.preventDefault();
          const from = dragFrom >= 0 ? dragFrom : order.findIndex((x) => x.id === e.dataTransfer.getData('text/plain'));
          moveInCart(from, i);
        }},
      el('span', {class: 'handle', 'aria-hidden': 'true'}, '⋮⋮'),
      el('strong', {class: 'link-no'}, t('catalog.link_n', {n: p.link})),
      el('span', {class: 'cart-name'}, p.name || p.id),
      el('span', {class: 'muted'}, typeof p.price === 'number' ? LH.fmt.money(p.price, state.cat.currency) : ''),
      el('span', {class: 'spacer'}), up, down,
      el('button', {type: 'button', class: 'link', onclick: () => {
        delete p.link; state.touched.add(p); renumberLinks(); changed(); renderCart(); renderProducts(); markProblems();
      }}, t('catalog.remove_from_cart')));
    });
    put(cards.cart,
      el('h2', {}, t('catalog.cart')), el('p', {class: 'muted small'}, t('catalog.cart_hint')),
      el('ol', {class: 'cart', id: 'catalog-cart-list'}, items),
      out.length ? el('div', {}, el('h3', {}, t('catalog.not_in_cart')),
        el('ul', {class: 'tight'}, out.map((p) => el('li', {}, p.name || p.id, ' ',
          el('button', {type: 'button', class: 'link', onclick: () => {
            p.link = order.length + 1; state.touched.add(p); changed(); renderCart(); renderProducts(); markProblems();
          }}, t('catalog.add_to_cart')))))) : null);
  }

  function focusMove(i, dir) {
    const li = cards.cart.querySelectorAll('li.cart-item')[i];
    if (!li) return;
    const btn = li.querySelector('[data-move="' + dir + '"]');
    (btn && !btn.disabled ? btn : li.querySelector('[data-move]:not([disabled])') || li).focus();
  }

  // ---- coupons and promotions ----

  function renderCoupons() {
    const list = state.cat.coupons || [];
    const rows = list.map((c, i) => {
      const path = 'coupons[' + i + ']';
      const isPercent = c.percent !== undefined && c.amount === undefined;
      const value = el('input', {'data-path': path + '.' + (isPercent ? 'percent' : 'amount'), class: 'num', inputmode: 'decimal',
        'aria-label': t('catalog.value'), value: (isPercent ? c.percent : c.amount) ?? '',
        oninput: (e) => {
          const k = kind.value === 'percent' ? 'percent' : 'amount';
          if (e.target.value.trim() === '') delete c[k]; else c[k] = parseNumber(e.target.value);
          changed(c);
        }});
      const kind = el('select', {'aria-label': t('catalog.coupon_kind'), onchange: () => {
        const [from, to] = kind.value === 'percent' ? ['amount', 'percent'] : ['percent', 'amount'];
        if (c[from] !== undefined) { c[to] = c[from]; delete c[from]; }
        value.dataset.path = path + '.' + to;
        changed(c);
      }}, el('option', {value: 'amount', selected: !isPercent}, t('catalog.amount_off')),
      el('option', {value: 'percent', selected: isPercent}, t('catalog.percent_off')));
      return el('tr', {'data-entry': path},
        el('td', {}, field(c, 'id', path + '.id', c, 'text', {label: t('catalog.col.id'), class: 'id-input'})),
        el('td', {}, field(c, 'name', path + '.name', c, 'text', {label: t('catalog.col.name')})),
        el('td', {class: 'nowrap'}, kind, ' ', value),
        el('td', {}, field(c, 'min_spend', path + '.min_spend', c, 'number', {label: t('catalog.min_spend'), class: 'num'})),
        el('td', {}, productsPicker(c, path + '.products', c, t('catalog.applies_to'))),
        el('td', {}, field(c, 'new_viewers_only', path + '.new_viewers_only', c, 'bool', {label: t('catalog.new_viewers_only')})),
        el('td', {}, field(c, 'remaining', path + '.remaining', c, 'number', {label: t('catalog.remaining'), class: 'num'})),
        el('td', {}, field(c, 'per_buyer', path + '.per_buyer', c, 'number', {label: t('catalog.per_buyer'), class: 'num'})),
        el('td', {}, field(c, 'starts', path + '.starts', c, 'datetime', {label: t('catalog.starts')}),
          field(c, 'ends', path + '.ends', c, 'datetime', {label: t('catalog.ends')})),
        el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => {
          removeEntry('coupons', i);
          if (!state.cat.coupons.length) delete state.cat.coupons;
          changed(); renderCoupons(); markProblems();
        }}, t('catalog.delete'))));
    });
    put(cards.coupons,
      el('div', {class: 'row'}, el('h2', {}, t('catalog.coupons')), el('span', {class: 'spacer'}),
        el('button', {type: 'button', id: 'catalog-add-coupon', onclick: () => {
          const c = {id: uniqueId('c-', list), name: ''};
          state.cat.coupons = [...list, c];
          changed(c); renderCoupons(); markProblems();
          cards.coupons.querySelector('tbody tr:last-child td:nth-child(2) input').focus();
        }}, t('catalog.add_coupon'))),
      rows.length ? el('div', {class: 'scroll'}, el('table', {id: 'catalog-coupons-table', class: 'edit-table'},
        el('thead', {}, el('tr', {}, [t('catalog.col.id'), t('catalog.col.name'), t('catalog.coupon_kind'), t('catalog.min_spend'),
          t('catalog.applies_to'), t('catalog.new_viewers_only'), t('catalog.remaining'), t('catalog.per_buyer'),
          t('catalog.starts') + ' / ' + t('catalog.ends'), ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))) : null);
  }

  function renderPromotions() {
    const list = state.cat.promotions || [];
    const rows = list.map((pr, i) => {
      const path = 'promotions[' + i + ']';
      const terms = (KIND_FIELDS[pr.kind] || []).map((k) => {
        const kind = k === 'gift' ? 'opt' : 'number';
        const label = {price: 'catalog.promo_price', percent: 'catalog.promo_percent', quantity: 'catalog.quantity',
          nth_percent: 'catalog.nth_percent', gift: 'catalog.gift', min_spend: 'catalog.min_spend'}[k];
        return labelled(t(label), field(pr, k, path + '.' + k, pr, kind, {class: kind === 'number' ? 'num' : ''}));
      });
      return el('tr', {'data-entry': path},
        el('td', {}, field(pr, 'id', path + '.id', pr, 'text', {label: t('catalog.col.id'), class: 'id-input'})),
        el('td', {}, field(pr, 'title', path + '.title', pr, 'text', {label: t('catalog.promo_title')})),
        el('td', {}, field(pr, 'kind', path + '.kind', pr, 'select', {label: t('catalog.kind'),
          options: KINDS.map((k) => [k, t('catalog.kind.' + k)]),
          after: (k) => {
            // Terms the new kind does not take would be refused: drop them.
            for (const f of ['price', 'percent', 'quantity', 'nth_percent', 'gift', 'min_spend']) if (!KIND_FIELDS[k].includes(f)) delete pr[f];
            renderPromotions(); markProblems();
          }})),
        el('td', {}, productsPicker(pr, path + '.products', pr, t('catalog.promo_products'))),
        el('td', {}, el('div', {class: 'terms'}, terms)),
        el('td', {}, field(pr, 'starts', path + '.starts', pr, 'datetime', {label: t('catalog.starts')}),
          field(pr, 'ends', path + '.ends', pr, 'datetime', {label: t('catalog.ends')})),
        el('td', {}, field(pr, 'text', path + '.text', pr, 'opt', {label: t('catalog.text')})),
        el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => {
          removeEntry('promotions', i);
          if (!state.cat.promotions.length) delete state.cat.promotions;
          changed(); renderPromotions(); markProblems();
        }}, t('catalog.delete'))));
    });
    put(cards.promotions,
      el('div', {class: 'row'}, el('h2', {}, t('catalog.promotions')), el('span', {class: 'spacer'}),
        el('button', {type: 'button', id: 'catalog-add-promotion', onclick: () => {
          const pr = {id: uniqueId('pr-', list), title: '', kind: 'price', products: state.cat.products.length ? [state.cat.products[0].id] : []};
          state.cat.promotions = [...list, pr];
          changed(pr); renderPromotions(); markProblems();
          cards.promotions.querySelector('tbody tr:last-child td:nth-child(2) input').focus();
        }}, t('catalog.add_promotion'))),
      rows.length ? el('div', {class: 'scroll'}, el('table', {id: 'catalog-promotions-table', class: 'edit-table'},
        el('thead', {}, el('tr', {}, [t('catalog.col.id'), t('catalog.promo_title'), t('catalog.kind'), t('catalog.promo_products'),
          t('catalog.terms'), t('catalog.starts') + ' / ' + t('catalog.ends'), t('catalog.text'), ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))) : null);
  }

  // ---- import and export ----

  function renderImport() {
    const file = el('input', {type: 'file', id: 'catalog-import-file', accept: '.csv,.json,text/csv,application/json'});
    const result = el('div', {id: 'catalog-import-result'});
    const checkFile = async () => {
      const f = file.files[0];
      if (!f) { toast(t('catalog.import_pick'), 'error'); return; }
      const type = /\.json$/i.test(f.name) || f.type === 'application/json' ? 'application/json' : 'text/csv';
      const text = await f.text();
      try {
        const r = await api('POST', base + '/parse', text, {type});
        const c = r.catalog;
        result.replaceChildren(
          el('p', {id: 'catalog-import-ok'}, t('catalog.import_ok', {products: c.products.length, coupons: (c.coupons || []).length,
            promotions: (c.promotions || []).length})),
          ...(r.warnings || []).map((w) => el('p', {class: 'muted small'}, t('catalog.import_warning', {text: w}))),
          el('button', {type: 'button', id: 'catalog-import-load', onclick: () => {
            state.cat = normalize(c);
            for (const s of SECTIONS) for (const x of state.cat[s] || []) state.touched.add(x);
            state.selected = -1;
            changed();
            renderAll();
            toast(t('catalog.import_loaded'));
          }}, t('catalog.import_load')));
      } catch (err) {
        if (err.code !== 'catalog_invalid' || !err.body) { showError(err); return; }
        const probs = err.body.problems || [];
        result.replaceChildren(el('p', {class: 'error'}, t('catalog.import_problems', {n: probs.length})),
          el('table', {id: 'catalog-import-problems'},
            el('thead', {}, el('tr', {}, ['section', 'row', 'column', 'message'].map((h) => el('th', {}, t('catalog.col.' + h))))),
            el('tbody', {}, probs.map((p) => el('tr', {},
              el('td', {}, t('catalog.section.' + p.section)), el('td', {}, p.row ? String(p.row) : ''),
              el('td', {class: 'mono'}, p.column || ''), el('td', {}, problemText(p)))))));
      }
    };
    cards.import.replaceChildren(
      el('h2', {}, t('catalog.import')), el('p', {class: 'muted small'}, t('catalog.import_hint')),
      el('div', {class: 'row'}, file, el('button', {type: 'button', class: 'secondary', id: 'catalog-import-check', onclick: checkFile}, t('catalog.import_check'))),
      result);
  }

  function downloadJSON() {
    const blob = new Blob([JSON.stringify(state.cat, null, 2) + '\n'], {type: 'application/json'});
    const a = el('a', {href: URL.createObjectURL(blob), download: 'catalog-' + streamId + '.json'});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  await reload(false);
});
